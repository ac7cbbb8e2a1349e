package main

// The cold command (docs/runner-protocol.md#cold): what a fresh process pays before and at its
// first handshakes. The orchestrator starts one runner per sample and passes its own
// CLOCK_MONOTONIC reading just before the spawn (--spawned-at-ns); main reads the same clock first
// thing (startedNs), so process_start_ns is the exec, the dynamic loader (none: the runner is
// linked statically), Go's runtime start-up and the packages' init functions. Then, both sides in
// this process, each side's context is built (server first; its files read and parsed, timed per
// side), a first full handshake, then a second full one (handshake-full) or a first resumption
// and a second one (resumption scenarios), each timed per side as the time measure times a side:
// only inside that side's calls. Time only: callgrind cannot be switched on around a pure-Go
// runner's calls (capabilities' measure_limits), so --count-side is unsupported.

import (
	"flag"
	"fmt"
	"slices"
	"syscall"
	"unsafe"
)

// startedNs is CLOCK_MONOTONIC as main began (0 until then).
var startedNs int64

// monotonicNs reads CLOCK_MONOTONIC, the clock the orchestrator's --spawned-at-ns is read from
// (Go's time.Now keeps a monotonic reading of its own base, not this clock's value).
func monotonicNs() int64 {
	const clockMonotonic = 1
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// ColdReport is the cold reply's body.
type ColdReport struct {
	ProcessStartNs *int64   `json:"process_start_ns,omitempty"`
	Client         ColdSide `json:"client"`
	Server         ColdSide `json:"server"`
}

// ColdSide is one side's figures, in nanoseconds of its own calls.
type ColdSide struct {
	ContextNs      int64  `json:"context_ns"`
	FirstNs        int64  `json:"first_ns"`
	SecondNs       *int64 `json:"second_ns,omitempty"`
	FirstResumeNs  *int64 `json:"first_resume_ns,omitempty"`
	SecondResumeNs *int64 `json:"second_resume_ns,omitempty"`
}

// ColdReply is {"status":"ok","cold":{...},"client_library":..,"server_library":..} or a status
// and its reason.
type ColdReply struct {
	Status        string      `json:"status"`
	Reason        string      `json:"reason,omitempty"`
	Cold          *ColdReport `json:"cold,omitempty"`
	ClientLibrary string      `json:"client_library,omitempty"`
	ServerLibrary string      `json:"server_library,omitempty"`
}

// coldKinds are the kinds cold takes: the handshakes, and context-client-system as a full
// handshake whose client builds its first x509.SystemCertPool (what a Go process pays once).
var coldKinds = []Kind{HandshakeFull, HandshakeResumeID, HandshakeResumeTicket, ContextClientSystem}

func coldCommand(args []string) (*ColdReport, error) {
	var s settings
	f := newFlags("cold", &s)
	client, server := f.String("client", "", ""), f.String("server", "", "")
	spawnedAt := f.Int64("spawned-at-ns", -1, "")
	scenario, _, err := parse(f, args, &s)
	if err != nil {
		return nil, err
	}
	for _, id := range []string{*client, *server} {
		if err := checkStack(id); err != nil {
			return nil, err
		}
	}
	if !slices.Contains(coldKinds, scenario.Kind) {
		return nil, unsupported("cold takes a handshake scenario (handshake-full, handshake-resume-id, "+
			"handshake-resume-ticket; the Go runner also context-client-system), not %s", scenario.Kind)
	}
	caps := capabilities()
	if given(f, "count-side") {
		return nil, unsupported("%s", caps.MeasureLimits[0].Reason)
	}
	if err := caps.check(scenario); err != nil {
		return nil, err
	}
	report := &ColdReport{}
	if given(f, "spawned-at-ns") {
		if *spawnedAt < 0 || *spawnedAt > startedNs {
			return nil, fmt.Errorf("cold: --spawned-at-ns %d is not a CLOCK_MONOTONIC reading before this "+
				"process began (%d)", *spawnedAt, startedNs)
		}
		start := startedNs - *spawnedAt
		report.ProcessStartNs = &start
	}
	p, err := coldPair(scenario, s.dataDir, report)
	if err != nil {
		return nil, err
	}
	defer p.close()
	// One handshake on new connections with each side's clock, through the gates.
	timed := func(resumed bool) ([2]int64, error) {
		clocks := [2]*clock{{}, {}}
		if err := p.checkedHandshake(&meter{clocks: clocks}, resumed); err != nil {
			return [2]int64{}, trustHint(scenario, err)
		}
		return [2]int64{clocks[Client].elapsed.Nanoseconds(), clocks[Server].elapsed.Nanoseconds()}, nil
	}
	sides := [2]*ColdSide{&report.Client, &report.Server}
	// The first full handshake; a resumption scenario's is the seed whose session the next resumes
	// (its client keeps sessions, so it makes no second full handshake).
	ns, err := timed(false)
	if err != nil {
		return nil, err
	}
	for side, figures := range sides {
		figures.FirstNs = ns[side]
	}
	steps := []func(*ColdSide) **int64{func(c *ColdSide) **int64 { return &c.SecondNs }}
	if scenario.Kind.isResumption() {
		steps = []func(*ColdSide) **int64{
			func(c *ColdSide) **int64 { return &c.FirstResumeNs }, func(c *ColdSide) **int64 { return &c.SecondResumeNs },
		}
	}
	for _, field := range steps {
		ns, err := timed(scenario.Kind.isResumption())
		if err != nil {
			return nil, err
		}
		for side, figures := range sides {
			*field(figures) = &ns[side]
		}
	}
	return report, nil
}

// coldPair builds each side's context, timed per side (the server's first), into report.
func coldPair(s Scenario, dataDir string, report *ColdReport) (*pair, error) {
	p := &pair{scenario: s, link: newLink(false)}
	// The coroutines that drive the handshakes are the runner's, made before either clock runs.
	handshakers := [2]*handshaker{newHandshaker(), newHandshaker()}
	for _, side := range []Side{Server, Client} {
		b := newContextBuilder(side, s, dataDir)
		c := &clock{}
		var cfg *sideConfig
		var err error
		c.time(func() {
			config, cache, buildErr := b.build()
			cfg, err = &sideConfig{side: side, tls: config, cache: cache, hs: handshakers[side]}, buildErr
		})
		if err != nil {
			p.close()
			return nil, failed(side, "context", err)
		}
		p.configs[side] = cfg
		ns := c.elapsed.Nanoseconds()
		if side == Client {
			report.Client.ContextNs = ns
		} else {
			report.Server.ContextNs = ns
		}
	}
	return p, nil
}

// given says whether the flag was on the command line.
func given(f *flag.FlagSet, name string) bool {
	found := false
	f.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}
