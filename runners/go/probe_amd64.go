package main

// probeAvailable: on amd64 the probe's workload is the harness's, instruction for instruction
// (probe_amd64.s), so the runner can judge its loop against the orchestrator's reference.
const probeAvailable = true

// sysGetcpu is getcpu(2)'s number on amd64 (the syscall package does not name it here).
const sysGetcpu = 309

// stretchRounds runs the probe's workload for rounds rounds (probe_amd64.s).
func stretchRounds(rounds uint64)
