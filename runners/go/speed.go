package main

// The measured loop's judge (crates/harness/src/speed.rs, docs/sampling.md "Inside the sample: the
// stretches at full speed"): about every 250 µs the loop times its CPU on a fixed workload, and a
// stretch of iterations counts only where the probes at both of its ends found the CPU at full
// speed; a slowed probe moves the thread to the fastest CPU it may use.

import (
	"syscall"
	"time"
	"unsafe"
)

const (
	// fullSpeed: a probe at this fraction of the reference or more found the CPU at full speed.
	fullSpeed = 0.85
	// probeEvery: how often the measured loop times its CPU, between iterations.
	probeEvery = 250 * time.Microsecond
	// probeRounds: rounds of the workload per timed stretch, about 1 µs at full speed.
	probeRounds = 256
	// gateBound: a judged loop goes on for stretches at full speed until each side's clock over
	// every stretch has run this many times its minimum; then every stretch counts.
	gateBound = 6
)

// probe is the workload's rounds per microsecond on this thread's CPU now: a short stretch
// first, then the faster of two timed stretches (an interrupt in one does not make it slow).
func probe() float64 {
	stretchRounds(probeRounds / 4)
	fastest := min(timedStretch(), timedStretch())
	return probeRounds / max(fastest.Seconds()*1e6, 1e-9)
}

func timedStretch() time.Duration {
	started := time.Now()
	stretchRounds(probeRounds)
	return time.Since(started)
}

// CPUSpeed is the sample reply's cpu_speed: what the judged loop did.
type CPUSpeed struct {
	// Gated: the figures are of the stretches at full speed alone; false: too few were before
	// the bound, and the figures are of every stretch.
	Gated bool `json:"gated"`
	// Speed: the CPU's mean speed at the ends of the stretches the figures are of, a fraction of
	// the reference.
	Speed float64 `json:"speed"`
	// FullSpeedShare: of all the loop's stretches, the share at full speed.
	FullSpeedShare float64 `json:"full_speed_share"`
	// Moves: how often the loop moved to a faster CPU.
	Moves uint32 `json:"moves"`
}

// speeds sums the probes at the ends of a set of stretches, one per stretch.
type speeds struct {
	sum    float64
	probes uint32
}

func (s *speeds) add(speed float64) { s.sum, s.probes = s.sum+speed, s.probes+1 }

func (s speeds) mean() float64 { return s.sum / float64(max(s.probes, 1)) }

// gate judges a measured loop against reference (the workload's rounds per microsecond at full
// speed, as the orchestrator found it). The driver's thread is locked (main.go), so the CPU
// mask it sets is that of the thread running both sides.
type gate struct {
	threshold, reference float64
	// cpus: those the thread may move among (its mask when the loop began; restored by done).
	cpus      []int
	lastProbe time.Time
	lastFast  bool
	counted   speeds
	all       speeds
	moves     uint32
}

// newGate probes (and moves) once before the first iteration.
func newGate(reference float64) *gate {
	g := &gate{threshold: fullSpeed * reference, reference: reference, cpus: allowedCPUs()}
	g.lastFast = g.probeOrMove() >= g.threshold
	return g
}

// due: the stretch since the last probe is long enough to be judged.
func (g *gate) due() bool { return time.Since(g.lastProbe) >= probeEvery }

// judge ends the stretch since the last probe: whether it counts (full speed at both ends).
func (g *gate) judge() bool {
	speed := g.probeOrMove()
	fast := g.lastFast && speed >= g.threshold
	g.lastFast = speed >= g.threshold
	g.all.add(speed)
	if fast {
		g.counted.add(speed)
	}
	return fast
}

// finish is what the loop did, gated when its figures are of the stretches at full speed; the
// thread goes back to every CPU it had.
func (g *gate) finish(gated bool) *CPUSpeed {
	if len(g.cpus) > 1 {
		pinTo(g.cpus)
	}
	of := g.all
	if gated {
		of = g.counted
	}
	return &CPUSpeed{
		Gated: gated, Speed: of.mean() / g.reference,
		FullSpeedShare: float64(g.counted.probes) / float64(max(g.all.probes, 1)), Moves: g.moves,
	}
}

// probeOrMove times this CPU; where it is slowed and there are others, it times each of them
// and stays on the fastest. It returns the speed where the thread now is.
func (g *gate) probeOrMove() float64 {
	speed := probe()
	if speed < g.threshold && len(g.cpus) > 1 {
		here := currentCPU()
		fastest := here
		for _, cpu := range g.cpus {
			if cpu == here || !pinTo([]int{cpu}) {
				continue
			}
			if there := probe(); there > speed {
				speed, fastest = there, cpu
			}
		}
		if fastest != here {
			g.moves++
		}
		if fastest >= 0 {
			pinTo([]int{fastest})
		}
	}
	g.lastProbe = time.Now()
	return speed
}

// cpuMask is sched_{get,set}affinity's mask (1,024 CPUs): a package variable, so that a move in
// the measured loop allocates nothing (only the driver's thread uses it).
var cpuMask [16]uint64

// allowedCPUs are the CPUs this thread may run on.
func allowedCPUs() []int {
	cpuMask = [16]uint64{}
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(cpuMask),
		uintptr(unsafe.Pointer(&cpuMask)))
	var cpus []int
	for cpu := 0; errno == 0 && cpu < len(cpuMask)*64; cpu++ {
		if cpuMask[cpu/64]&(1<<(cpu%64)) != 0 {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// pinTo lets this thread run on cpus only; false where the kernel refused.
func pinTo(cpus []int) bool {
	cpuMask = [16]uint64{}
	for _, cpu := range cpus {
		cpuMask[cpu/64] |= 1 << (cpu % 64)
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(cpuMask),
		uintptr(unsafe.Pointer(&cpuMask)))
	return errno == 0
}

// currentCPU is the CPU this thread runs on now, -1 where unknown.
func currentCPU() int {
	if sysGetcpu < 0 {
		return -1
	}
	var cpu uint32
	if _, _, errno := syscall.RawSyscall(uintptr(sysGetcpu), uintptr(unsafe.Pointer(&cpu)), 0, 0); errno != 0 {
		return -1
	}
	return int(cpu)
}
