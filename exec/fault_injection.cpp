#include "exec/fault_injection.hpp"

#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "model/errors.hpp"

namespace mrplan {

namespace {

struct FaultSpec {
  std::string point;
  long occurrence = 0;
  FaultAction action = FaultAction::none;
  int rank = -1;  // any
};

FaultSpec parse_fault(const char* text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string p; std::getline(in, p, ':');) parts.push_back(p);
  static const std::map<std::string, FaultAction> actions{
      {"kill", FaultAction::kill}, {"stop", FaultAction::stop}, {"enospc", FaultAction::enospc}, {"error", FaultAction::error}};
  FaultSpec f;
  try {
    if (parts.size() < 3 || parts.size() > 4 || !actions.count(parts[2])) throw std::invalid_argument("shape");
    f.point = parts[0];
    f.occurrence = std::stol(parts[1]);
    f.action = actions.at(parts[2]);
    if (parts.size() == 4) f.rank = std::stoi(parts[3]);
  } catch (const std::exception&) {
    fail_input("MRPLAN_FAULT", "", std::string("expected POINT:N:kill|stop|enospc|error[:RANK], got '") + text + "'");
  }
  return f;
}

}  // namespace

FaultAction fault_at(const std::string& point, int rank) {
  static const char* text = std::getenv("MRPLAN_FAULT");
  if (text == nullptr || *text == '\0') return FaultAction::none;
  static const FaultSpec spec = parse_fault(text);
  static std::mutex m;
  static long seen = 0;
  if (point != spec.point || (spec.rank >= 0 && spec.rank != rank)) return FaultAction::none;
  std::lock_guard<std::mutex> lock(m);
  return ++seen == spec.occurrence ? spec.action : FaultAction::none;
}

void act_on(FaultAction action) {
  if (action == FaultAction::kill) std::raise(SIGKILL);
  if (action == FaultAction::stop) std::raise(SIGSTOP);
  if (action == FaultAction::error) fail_input("MRPLAN_FAULT", "", "an injected input error (as a bad sample in this rank's shard)");
}

}  // namespace mrplan
