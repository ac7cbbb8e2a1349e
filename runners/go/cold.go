package main

// The cold command: what a fresh process pays before and at its first handshakes. The
// orchestrator starts one runner per sample and passes its own CLOCK_MONOTONIC reading just
// before the spawn (--spawned-at-ns); main reads the same clock first thing (startedNs), so
// process_start_ns is the exec, the dynamic loader (none: Go links statically), Go's runtime
// start-up and the packages' init functions. Then, both sides in this process, each side's
// context is built (its files read and parsed, timed per side), a first full handshake and a
// second one are made, and for a resumption scenario a first resumption and a second one, each
// timed per side as the time measure times a side: only inside that side's calls.

import (
	"flag"
	"fmt"
	"slices"
	"strings"
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
	SecondNs       int64  `json:"second_ns"`
	FirstResumeNs  *int64 `json:"first_resume_ns,omitempty"`
	SecondResumeNs *int64 `json:"second_resume_ns,omitempty"`
}

// ColdReply is {"status":"ok","cold":{...}} or a status and its reason.
type ColdReply struct {
	Status string      `json:"status"`
	Reason string      `json:"reason,omitempty"`
	Cold   *ColdReport `json:"cold,omitempty"`
}

// coldKinds are the kinds cold takes: handshakes, and a context kind as a full handshake whose
// side builds that context (context-client-system: the client's first x509.SystemCertPool).
var coldKinds = []Kind{HandshakeFull, HandshakeResumeTicket, ContextServer, ContextClient, ContextClientSystem}

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
	caps := capabilities()
	if err := caps.check(scenario); err != nil {
		return nil, err
	}
	if !slices.Contains(coldKinds, scenario.Kind) {
		names := make([]string, len(coldKinds))
		for i, k := range coldKinds {
			names[i] = string(k)
		}
		return nil, unsupported("go: cold does not apply to %s scenarios (it applies to: %s)",
			scenario.Kind, strings.Join(names, ", "))
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
	sides := [2]*ColdSide{&report.Client, &report.Server}
	timed := func(resumed bool, into func(*ColdSide) *int64) error {
		clocks := [2]*clock{{}, {}}
		if err := p.checkedHandshake(&meter{clocks: clocks}, resumed); err != nil {
			return trustHint(scenario, err)
		}
		for _, side := range []Side{Client, Server} {
			*into(sides[side]) = clocks[side].elapsed.Nanoseconds()
		}
		return nil
	}
	resumes := scenario.Kind.isResumption()
	cache := p.configs[Client].cache
	for _, step := range []func(*ColdSide) *int64{
		func(c *ColdSide) *int64 { return &c.FirstNs }, func(c *ColdSide) *int64 { return &c.SecondNs },
	} {
		// Both full: the client forgets the ticket the first one left.
		if cache != nil {
			cache.session = nil
		}
		if err := timed(false, step); err != nil {
			return nil, err
		}
	}
	if resumes {
		for _, c := range sides {
			c.FirstResumeNs, c.SecondResumeNs = new(int64), new(int64)
		}
		if err := timed(true, func(c *ColdSide) *int64 { return c.FirstResumeNs }); err != nil {
			return nil, err
		}
		if err := timed(true, func(c *ColdSide) *int64 { return c.SecondResumeNs }); err != nil {
			return nil, err
		}
	}
	return report, nil
}

// coldPair builds each side's context, timed per side (the client's first), into report.
func coldPair(s Scenario, dataDir string, report *ColdReport) (*pair, error) {
	p := &pair{scenario: s, link: newLink(false)}
	// The coroutines that drive the handshakes are the runner's, made before either clock runs.
	handshakers := [2]*handshaker{newHandshaker(), newHandshaker()}
	for _, side := range []Side{Client, Server} {
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
