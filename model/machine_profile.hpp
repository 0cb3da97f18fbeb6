#pragma once
// Everything the cost models need about a cluster. Hardware numbers are public specifications;
// efficiency, overhead and convergence numbers are fitted (see `fitted`, which says from what).
#include <compare>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/codec.hpp"
#include "model/storage_tier.hpp"

namespace mrplan {

// Hockney model of one interconnect level: time(n bytes) = alpha_s + n / bandwidth_Bps.
struct LinkLevel {
  double alpha_s = 5e-6;
  double bandwidth_Bps = 1e10;  // per GPU (intra-node) or per node (inter-node), one direction
};

// One phase of a whole training step (forward with zero_grad before it, or backward) against its ops
// timed alone: ops alone run with their inputs in cache and without autograd between them, and the
// phase also sweeps every gradient (zeroing before forward, accumulating into .grad in backward) at
// mem_efficiency. Fitted per phase by calibrate compute from whole steps.
struct StepPhaseScale {
  double factor = 1.0;
  double bytes_per_param = 0;
  // Each op's time in the phase beyond its scaled time alone, signed: on a GPU an op timed alone
  // waits for its launch and the device, which a whole step overlaps (negative; H200 full-size
  // networks: docs/execution.md). Fitted where the whole steps' op counts differ.
  double per_op_s = 0;
};

struct ComputeParams {
  double peak_fp32_flops = 15.7e12;
  double peak_fp16_flops = 120e12;  // tensor cores (used when the plan's precision is amp)
  double mem_bandwidth_Bps = 900e9;
  // Efficiency at saturation per math family (conv1d, conv2d, conv3d, linear), of peak:
  // eff(work) = efficiency[family] * work / (work + half_work_flops) (fitted saturation curve).
  std::map<std::string, double> efficiency = {{"conv1d", 0.5}, {"conv2d", 0.5}, {"conv3d", 0.5}, {"linear", 0.5}};
  // Work per kernel at which efficiency is half its peak, at the fp32 peak; a kernel on faster units
  // (tensor cores) fills the GPU after the same time, so at this times their peak over the fp32 one.
  double half_work_flops = 1e9;
  // Per math family, where they differ (a convolution's setup costs more than a GEMM's); unlisted: half_work_flops.
  std::map<std::string, double> half_work_flops_by_family;
  double mem_efficiency = 0.7;    // achieved fraction of memory bandwidth for memory-bound kernels
  // Per memory-bound kind (batch_norm, max_pool, activation, dropout, ...): its own fraction of
  // the bandwidth (training-mode batch norm sweeps its input several times); unlisted: mem_efficiency.
  std::map<std::string, double> mem_efficiency_by_kind;
  // Per family or kind: backward kernels' efficiency relative to forward's (on CPUs the weight
  // gradient of a convolution runs far below its forward); unlisted: 1.
  std::map<std::string, double> backward_efficiency;
  double kernel_overhead_s = 5e-6;  // launch + framework dispatch per kernel
  // An optimizer step's cost per parameter tensor on top of its sweep: per-tensor loops (LibTorch's
  // Adam and SGD) launch a handful of kernels for each weight and bias (fitted from whole steps).
  double optimizer_tensor_s = 0;
  StepPhaseScale step_forward, step_backward;
  // A captured step (plan `steps: captured`, exec/captured_step): its kernels follow each other
  // from one graph launch, each after this gap instead of its launch (kernel_overhead_s); fitted by
  // calibrate compute from captured steps (0: not measured, kernels back to back).
  double captured_kernel_gap_s = 0;
  // Relative standard deviation of one rank's step time: ranks wait for the slowest at every
  // allreduce (model/straggler; fitted by calibrate compute from repeated whole steps).
  double step_time_cv = 0;
  // A stage's start-up: its first steps touch the step's working set for the first time (page
  // faults of a growing heap on CPUs). Working set = activation_factor * activation bytes +
  // param_factor * parameter bytes; first touch runs at bandwidth_Bps (0: not measured, no start-up).
  struct FirstTouch {
    double activation_factor = 0, param_factor = 0, bandwidth_Bps = 0;
  } first_touch;
  // A validation pass's forward (eval mode, no autograd) over the training step's forward phase at
  // the same batch (fitted by calibrate compute; 0: not measured, validation passes not predicted).
  double inference_factor = 0;
  // A validation pass's cost that does not shrink with its samples (the loader's and the metric's
  // set-up and reduction): per pass, beside the forwards (fitted by calibrate records; 0: none).
  double eval_pass_s = 0;
  // Per workload (its convergence key): a stage's first epoch's cost beyond its steps and its
  // reads, the code's kernel autotuning, compilation and graph capture and its loader's first fill
  // (fitted by calibrate records from the runs' first epochs; unlisted: none).
  std::map<std::string, double> warmup_s;
  // Relative standard deviation of the machine's speed from run to run (each measured run times its
  // best matmul at its start; calibrate convergence fits it from such records): the Monte Carlo
  // scales the device's peaks and bandwidth by a draw of it (0: not measured).
  double run_speed_cv = 0;
};

// Ranks of one node disturbing each other, fitted by `calibrate sharing` (its own section, so that
// `calibrate compute` rewrites the compute section without touching it).
struct NodeSharingParams {
  // A rank's step when every device of its node trains at once, over the same step alone: ranks of
  // one node share memory bandwidth, caches and, on CPUs, cores with each other's comm and loader
  // threads (1 where ranks do not disturb each other).
  double slowdown = 1.0;
  // Compute time a rank loses per second of its gradient allreduce (CPU: the comm thread and MPI
  // progress take compute's cores, and can take more than the allreduce alone lasts; GPU: NCCL
  // kernels take SMs).
  double comm_steal_fraction = 0.0;
  // Relative standard deviation of a rank's step while the node's ranks step together, in place of
  // compute.step_time_cv where ranks share a node: they disturb each other far more than a rank
  // alone varies (0: not measured, compute.step_time_cv holds).
  double step_time_cv = 0.0;
};

// How an allreduce is priced: Hockney alpha-beta over the links (MPI, mrplan's CPU runs), or NCCL's
// own tuner model of its algorithms and protocols (GPU machines; model/nccl_allreduce).
enum class Collectives { alpha_beta, nccl };

struct CommParams {
  LinkLevel intra_node;
  LinkLevel inter_node;
  Collectives collectives = Collectives::alpha_beta;
  double bandwidth_efficiency = 1.0;  // fitted: achieved / link bandwidth
  double call_overhead_s = 0.0;       // fitted: framework cost per allreduce call (bucket)
  // fitted: the same where a plan's comm.framework is horovod (0: not measured, call_overhead_s holds)
  double horovod_call_overhead_s = 0.0;
  // fitted: framework cost per pooled batch norm's statistics collective (0: not measured), which
  // PyTorch's SyncBatchNorm issues from Python per layer and direction, each between small kernels
  double sync_batchnorm_call_s = 0.0;
};

// What the page cache may hold of a node's memory where a profile does not say.
inline double default_page_cache_bytes(double host_memory_bytes) { return host_memory_bytes / 2; }

struct IoParams {
  // The tiers a profile describes; device memory is not among them: its room is what the plan's
  // model leaves on each GPU, read at the GPU's memory bandwidth (model/io_cost).
  StorageTier pfs{10e9, 1e12, 0, 1e-3};
  StorageTier nvme{5e9, 0, 1.6e12, 0};
  StorageTier host_memory{20e9, 0, 128e9, 0};  // a page-cached file; room: what the page cache may hold
  double host_to_device_Bps = 16e9;   // per GPU, link speed
  double host_to_device_efficiency = 1.0;  // fitted: achieved fraction (pageable copies reach less)
  double host_decode_Bps = 2e9;       // per rank: host preprocessing throughput
  int prefetch_depth = 2;             // batches read ahead
  double worker_start_s = 0;          // a loader starting its workers at a pass (plans without persistent_workers)
  // Staging copies (and may unpack) a node's share with its own tool, at its own rate: fitted from
  // the runs' staging times where they logged them, else the file system's node rate (0). Its
  // fixed part (the tool's start, listing the files) is what two node counts tell apart.
  double staging_node_Bps = 0;
  double staging_fixed_s = 0;
  // The workloads whose logged staging fitted them: a copy beside the first epoch (a plan's
  // staging_async) reads at the tool's pace only for these; another code's tool is not theirs.
  std::vector<std::string> staging_workloads;
  std::map<std::string, CodecRates> codecs;  // by codec name (model/codec.hpp)
};

// Learning curve of one metric against epochs. exp: m(e) = floor + amplitude*exp(-e/scale);
// power: m(e) = floor + amplitude*(1+e)^-scale. For a metric to maximise, amplitude < 0.
enum class CurveForm { exp, power };
struct LearningCurve {
  CurveForm form = CurveForm::exp;
  double floor = 0;
  double amplitude = 1;
  double scale = 10;
};

// Where a tuning holds: a global batch, and the id of the recipe its runs stated (ModelRun::recipe,
// model/learning_curve recipe_id; empty: runs that did not state theirs, one system's own).
struct TuningSlot {
  int global_batch = 0;
  std::string recipe_id;
  auto operator<=>(const TuningSlot&) const = default;
};

// Convergence of one workload under one set of hyper-parameters (per-resolution curves and
// the transfer benefit of MRT), in epochs of the training set.
struct ConvergenceParams {
  LearningCurve dense_metric;   // validation metric, dense model from scratch
  LearningCurve coarse_loss;    // training loss of the coarse model (what the switch rule watches)
  LearningCurve coarse_metric;  // validation metric of the coarse-only model
  double transfer_efficiency = 0.5;  // dense epochs saved per unit of coarse progress (x dense epochs)
  double overtrain_epochs = 1e9;     // coarse epochs after which transfer starts to hurt
  double overtrain_penalty = 1.0;    // dense epochs added per coarse epoch beyond that
  // MRMF: dense progress the fused model's trained top layer group adds per unit of its parent's
  // progress (model/learning_curve fused_progress); 0: a fusion gives what MRT's transfer gives
  double fusion_efficiency = 0;
  // Transfer learning: the progress (as above, 0..1) a model pretrained on related data starts its
  // fine-tuning from, fitted by calibrate convergence from transfer runs; kUnmeasured: not fitted, and
  // model/learning_curve pretrained_start lends MRT's transfer efficiency as the prior.
  static constexpr double kUnmeasured = -2;
  double pretrained_progress = kUnmeasured;
  double reference_global_batch = 256;  // batch the curves were measured at
  int coarse_resolution = 2;            // resolution the coarse curves were measured at
  double critical_batch = 0;  // epochs grow as (1 + B/critical)/(1 + B_ref/critical); 0 = no growth
  // Every epoch count of the curves scaled to measured runs' epochs to target (their
  // hyper-parameters): fitted by calibrate records (calibrate/batch_epochs_fit).
  double epoch_factor = 1;
  // A submission retunes its hyper-parameters at its batch (MLPerf HPC rules), so a system's epochs at
  // one batch are its persistent factor times that batch's tuning: the tunings measured by runs at a
  // global batch, its own runs' there, or a recipe's on any system that ran it (calibrate/
  // batch_epochs_fit), and the spread of a batch's tuning measured on the systems that ran two, which a
  // batch without runs is drawn from (0: not measured, not drawn).
  std::map<TuningSlot, double> tuned_factor;
  double batch_tuning_cv = 0;
  // Seed-to-seed spread, fitted by calibrate convergence from several seeds of one plan (and the epochs'
  // by calibrate records from repeats of a batch): relative standard deviation of the epochs to target
  // and of the switch epoch (0: not measured).
  double seed_epochs_cv = 0, seed_switch_cv = 0;
  // The epochs seed_epochs_cv holds at (0: at any). A run's spread in epochs grows as the square root
  // of its epochs, each epoch's progress noisy on its own (a first passage's variance grows as its
  // mean): MLPerf HPC's repeats spread 15% under 12 epochs, 8% above (calibrate/batch_epochs_fit).
  double seed_epochs_ref = 0;
  // One seed's draw (sim/monte_carlo): every epoch count of the workload scaled by it, read at seed_epochs_ref
  // (model/learning_curve seeded_epochs; 1: the curves' own).
  double seed_epoch_factor = 1;
  // One draw's tuning at a batch tuned_factor does not hold (sim/monte_carlo; 1: the persistent factor's).
  double tuning_draw = 1;
};

struct FittedParameter {
  std::string key;
  double value = 0;
  double std_error = 0;  // 0 when the fit was exactly determined
  std::string source;    // what data, or "prior" / "public spec"
};

// The source calibrate records gives a value one GPU count cannot fit, held near other machines'
// fits of the same code (calibrate/code_priors held_source): its spread is theirs, not its runs'.
inline constexpr std::string_view kHeldNearPriorsSource = "calibrate records at one GPU count, near ";
inline bool is_held_near_priors(const FittedParameter& f) { return f.source.starts_with(kHeldNearPriorsSource); }

// The space a fit's normal lives in: its values, or their logs (a fit of factors that multiply, as the
// epochs-to-target curve's: drawn linearly, a critical batch at 60% standard error skewed the curve's
// product, HoreKa's band's P90 10% up).
enum class DrawScale { linear, log };

// How one fit's parameters moved together: their correlation (in the fit's `scale`), so that a
// draw (sim/monte_carlo) keeps what the data pinned (a critical batch and an epoch factor that meet
// at the runs' batch) instead of drawing each across its own range.
// Where the data only bound some of them, the normal the matrix describes crosses what they refute:
// then `draws` holds the fit's posterior itself (calibrate/posterior_draws), each row one draw of
// every key (their units), and a draw takes a row whole.
struct FitCorrelation {
  std::vector<std::string> keys;  // each fitted, with a finite, positive standard error
  std::vector<double> matrix;     // keys.size()^2, row-major: symmetric, unit diagonal, positive semi-definite
  std::vector<std::vector<double>> draws;  // each keys.size() values; none: drawn from the normal
  DrawScale scale = DrawScale::linear;     // log: the matrix correlates the logs; a key's log sd is its std_error / value
};

struct MachineProfile {
  std::string name;
  std::string description;
  int gpus_per_node = 4;
  bool whole_nodes = false;  // jobs must use every GPU of a node
  double gpu_memory_bytes = 16e9;
  double host_memory_bytes = 256e9;
  ComputeParams compute;
  NodeSharingParams node_sharing;
  CommParams comm;
  IoParams io;
  std::map<std::string, ConvergenceParams> convergence;  // by workload name
  std::vector<FittedParameter> fitted;
  std::vector<FitCorrelation> correlations;  // a key in one block at most; a block goes when one of its keys is fitted again
};

}  // namespace mrplan
