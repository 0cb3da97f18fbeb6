# Sourced by the studies' scripts from the repository root: installs what is missing, builds the
# release mrplan, and lets Open MPI run as root with more ranks than cores; M is the binary.
./scripts/setup.sh
cmake --preset release > /dev/null
cmake --build --preset release --target mrplan mrplan-exec -- -j"$(nproc)" > /dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
M=./build/release/mrplan
