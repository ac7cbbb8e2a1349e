// Command tlsbench-runner-go is tlsbench's runner for Go's crypto/tls (the stack `go`): the
// orchestrator starts it for one command, and it prints one JSON reply (runner protocol v2,
// crates/harness/src/runner.rs), or for a session of many samples, one reply per request line
// (session.go). Commands: list, sample (both sides in this process), side (one side of a
// split-process pair, against any runner's stack), trace, session, and the network mode: serve
// and load.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"
)

// The main goroutine stays on the main thread, and every side runs on it (the handshakes as
// coroutines, see handshaker): one thread, as in the Rust runners, whose CPU clock is the
// running side's. And one P unless GOMAXPROCS says otherwise: the garbage collector's work then
// runs on that thread too, mostly as assists inside the calls whose allocations call for it,
// rather than on another core, where it would be left out of the CPU clocks yet interrupt the
// measured thread (stack scans, stop-the-world phases) in wall time: with two Ps here, wall time
// came out 30% above CPU time. A split-process runner is pinned to one CPU, where Go takes one
// P by itself, so in-process and split samples run alike.
func init() {
	runtime.LockOSThread()
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

func main() {
	// The cold command's start-up ends here (cold.go).
	startedNs = monotonicNs()
	// First of all: nothing a library prints may reach the reply channel.
	replies, err := takeReplyChannel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlsbench runner: setting up the reply channel:", err)
		os.Exit(1)
	}
	if len(os.Args) == 2 && os.Args[1] == "session" {
		if err := session(os.Stdin, replies); err != nil {
			fmt.Fprintln(os.Stderr, "tlsbench runner: session:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	line, err := jsonLine(run(os.Args[1:], replies, false))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlsbench runner: encoding the reply:", err)
		os.Exit(1)
	}
	if _, err := replies.Write(line); err != nil {
		fmt.Fprintln(os.Stderr, "tlsbench runner: writing the reply:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// takeReplyChannel keeps the descriptor this process was given as stdout for the reply alone
// (a close-on-exec copy), and makes descriptor 1, and os.Stdout, stderr.
func takeReplyChannel() (*os.File, error) {
	fd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 1, syscall.F_DUPFD_CLOEXEC, 3)
	if errno != 0 {
		return nil, errno
	}
	if err := syscall.Dup3(2, 1, 0); err != nil {
		return nil, err
	}
	os.Stdout = os.Stderr
	return os.NewFile(fd, "replies"), nil
}

// jsonLine is a reply as one line.
func jsonLine(reply any) ([]byte, error) {
	line, err := json.Marshal(reply)
	return append(line, '\n'), err
}

// run answers one command (serve replies once on replies before it returns its last), or one
// request of a session (inSession). A panic anywhere (a coroutine's included: iter.Pull hands
// it to the caller) becomes a failed reply.
func run(args []string, replies io.Writer, inSession bool) (reply any) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "panic: %v\n%s", r, debug.Stack())
			reply = Reply{Status: "failed", Reason: fmt.Sprintf("the Go runner panicked: %v", r)}
		}
	}()
	command := ""
	if len(args) > 0 {
		command, args = args[0], args[1:]
	}
	switch command {
	case "list":
		stack := StackInfo{
			ID: stackID, Library: library(), TLSLibrary: tlsLibrary(), Backend: backend(), Capabilities: capabilities(),
		}
		return ListReply{ProtocolVersion: protocolVersion, Stacks: []StackInfo{stack}, FullSpeed: probeAvailable}
	case "sample":
		return replyOf(sample(args))
	case "side":
		return replyOf(side(args, inSession))
	case "cold":
		report, err := coldCommand(args)
		r := replyOf(nil, err)
		if report == nil {
			return ColdReply{Status: r.Status, Reason: r.Reason}
		}
		return ColdReply{Status: r.Status, Cold: report, ClientLibrary: library(), ServerLibrary: library()}
	case "trace":
		trace, err := traceCommand(args)
		r := replyOf(nil, err)
		return TraceReply{Status: r.Status, Reason: r.Reason, IoTrace: trace}
	case "serve":
		return netReplyOf(serveCommand(args, replies))
	case "load":
		return netReplyOf(loadCommand(args))
	case "session":
		// main runs a session without flags itself.
		return Reply{Status: "failed", Reason: fmt.Sprintf("session takes no flags (got %q)", args)}
	}
	return Reply{Status: "failed",
		Reason: fmt.Sprintf("unknown command `%s` (valid: list, sample, side, cold, trace, serve, load, session)", command)}
}

// settings are the flags of sample and side (runner.rs's SampleSettings): all accepted, though
// the instructions measure's are not used.
type settings struct {
	scenario, measure, cpuClock, countSide, dataDir string
	minTimeMs, warmupMs, iterations, warmupIters    uint64
	// fullSpeed: sample's --full-speed (speed.go); 0 when not given.
	fullSpeed float64
}

func newFlags(command string, s *settings) *flag.FlagSet {
	f := flag.NewFlagSet(command, flag.ContinueOnError)
	f.SetOutput(io.Discard)
	if s != nil {
		f.StringVar(&s.scenario, "scenario", "", "")
		f.StringVar(&s.measure, "measure", string(MeasureTime), "")
		f.Uint64Var(&s.minTimeMs, "min-time-ms", 100, "")
		f.Uint64Var(&s.warmupMs, "warmup-ms", 50, "")
		f.Float64Var(&s.fullSpeed, "full-speed", 0, "")
		f.StringVar(&s.cpuClock, "cpu-clock", "on", "")
		f.StringVar(&s.countSide, "count-side", "", "")
		f.Uint64Var(&s.iterations, "iterations", 20, "")
		f.Uint64Var(&s.warmupIters, "warmup-iterations", 2, "")
		f.StringVar(&s.dataDir, "data-dir", "", "")
	}
	return f
}

// parse reads the flags; the scenario, measure and CPU clock setting are checked here.
func parse(f *flag.FlagSet, args []string, s *settings) (Scenario, Measure, error) {
	if err := f.Parse(args); err != nil {
		return Scenario{}, "", fmt.Errorf("%s: %v", f.Name(), err)
	}
	if f.NArg() > 0 {
		return Scenario{}, "", fmt.Errorf("%s: unexpected argument `%s`", f.Name(), f.Arg(0))
	}
	if s.scenario == "" {
		return Scenario{}, "", fmt.Errorf("%s: --scenario is required", f.Name())
	}
	scenario, err := ParseScenario(s.scenario)
	if err != nil {
		return Scenario{}, "", err
	}
	measure, err := parseOne("measure", allMeasures, s.measure)
	if err != nil {
		return Scenario{}, "", err
	}
	if s.countSide != "" {
		if _, err := parseSide(s.countSide); err != nil {
			return Scenario{}, "", err
		}
	}
	switch s.cpuClock {
	case "on", "off":
		cpuClockOn = s.cpuClock == "on"
	default:
		return Scenario{}, "", fmt.Errorf("unknown --cpu-clock `%s` (valid: on, off)", s.cpuClock)
	}
	if s.dataDir == "" {
		s.dataDir = defaultDataDir()
	}
	return scenario, measure, nil
}

func parseSide(text string) (Side, error) {
	switch text {
	case "client":
		return Client, nil
	case "server":
		return Server, nil
	}
	return 0, fmt.Errorf("unknown side `%s` (valid: client, server)", text)
}

func checkStack(id string) error {
	if id != stackID {
		return fmt.Errorf("stack `%s` is not in this runner (it has: %s)", id, stackID)
	}
	return nil
}

// checkPeers applies each side's limits on its peer (the harness's check_pair).
func checkPeers(caps Capabilities, client, server string) error {
	if err := caps.checkPeer(Client, server); err != nil {
		return err
	}
	return caps.checkPeer(Server, client)
}

// supported says why the stack cannot take this sample, if it cannot: what it cannot be
// measured by, a measure that does not apply to the kind, a scenario it cannot do.
func supported(caps Capabilities, measure Measure, s Scenario) error {
	if err := caps.checkMeasure(measure); err != nil {
		return err
	}
	if err := checkMeasure(measure, s); err != nil {
		return err
	}
	return caps.check(s)
}

// sample measures one sample with both sides in this process.
func sample(args []string) (*SampleReport, error) {
	var s settings
	f := newFlags("sample", &s)
	client, server := f.String("client", "", ""), f.String("server", "", "")
	scenario, measure, err := parse(f, args, &s)
	if err != nil {
		return nil, err
	}
	for _, id := range []string{*client, *server} {
		if err := checkStack(id); err != nil {
			return nil, err
		}
	}
	caps := capabilities()
	if err := supported(caps, measure, scenario); err != nil {
		return nil, err
	}
	if err := checkPeers(caps, *client, *server); err != nil {
		return nil, err
	}
	if scenario.Kind.isContext() {
		return contextSample(scenario, measure, s.dataDir, spec(s))
	}
	cr, err := loadCredentials(s.dataDir, scenario.Key)
	if err != nil {
		return nil, err
	}
	p := newPair(scenario, cr, measure == MeasureIo)
	defer p.close()
	switch measure {
	case MeasureTime:
		if s.fullSpeed != 0 && !probeAvailable {
			return nil, errors.New("sample: --full-speed: this runner's probe is written for amd64 only (its list says so)")
		}
		judged := spec(s)
		judged.fullSpeed = s.fullSpeed
		return timeSample(p, judged)
	case MeasureIo:
		return ioSample(p)
	case MeasureHeap:
		if scenario.Kind.connections() > 0 {
			return memorySample(p)
		}
		return heapSample(p)
	}
	return nil, unsupported("measure %s is not taken by sample", measure)
}

func spec(s settings) sampleSpec {
	return sampleSpec{
		warmup: time.Duration(s.warmupMs) * time.Millisecond, minTime: time.Duration(s.minTimeMs) * time.Millisecond,
	}
}

// side measures this process's side of a split-process pair; the peer runner, reached through
// the socket at --peer-fd or at the Unix socket --peer-socket (the only way in a session, whose
// stdin carries the requests), runs the other.
func side(args []string, inSession bool) (*SampleReport, error) {
	var s settings
	f := newFlags("side", &s)
	role, stack, peerStack := f.String("role", "", ""), f.String("stack", "", ""), f.String("peer-stack", "", "")
	peerFd, peerSocket := f.Int("peer-fd", -1, ""), f.String("peer-socket", "", "")
	scenario, measure, err := parse(f, args, &s)
	if err != nil {
		return nil, err
	}
	own, err := parseSide(*role)
	if err != nil {
		return nil, err
	}
	if *peerStack == "" {
		return nil, errors.New("side: --peer-stack is required")
	}
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	switch {
	case inSession && given["peer-fd"]:
		return nil, errors.New("in a session the peer is reached with --peer-socket PATH, not --peer-fd")
	case given["peer-fd"] == given["peer-socket"]:
		return nil, errors.New("side: give exactly one of --peer-fd and --peer-socket")
	case given["peer-fd"] && *peerFd < 0:
		return nil, fmt.Errorf("side: --peer-fd %d is no descriptor", *peerFd)
	}
	// The peer first, so that a side that cannot measure lets its peer know at once (the
	// socket closes) rather than leave it waiting at --peer-socket.
	var peer *os.File
	if given["peer-socket"] {
		if peer, err = peerAt(own, *peerSocket); err != nil {
			return nil, err
		}
	} else {
		peer = os.NewFile(uintptr(*peerFd), "peer")
	}
	// Closed when the sample ends, whatever its outcome: the peer then sees the end.
	defer peer.Close()
	if err := checkStack(*stack); err != nil {
		return nil, err
	}
	caps := capabilities()
	if err := caps.checkMeasure(measure); err != nil {
		return nil, err
	}
	if measure != MeasureTime && measure != MeasureRss {
		return nil, unsupported("measure %s is taken in one process, not split-process", measure)
	}
	if err := supported(caps, measure, scenario); err != nil {
		return nil, err
	}
	if scenario.Kind.isContext() {
		return nil, unsupported("go: a context scenario is measured in one process (sample), where its gate's " +
			"handshake runs against this runner's other side")
	}
	// As the harness's side: this stack's limits on its peer; the peer's runner checks the peer's.
	if err := caps.checkPeer(own, *peerStack); err != nil {
		return nil, err
	}
	cr, err := loadCredentials(s.dataDir, scenario.Key)
	if err != nil {
		return nil, err
	}
	if measure == MeasureRss {
		r := &relay{peer: peer, side: own}
		report, err := memorySide(own, scenario, cr, r)
		if err != nil {
			// Tell the peer why we stop, so that it reports the cause rather than a broken socket.
			_ = r.send(message{tag: tagAbort, reason: err.Error()})
		}
		return report, err
	}
	return splitSample(own, scenario, cr, spec(s), peer)
}

// traceCommand records every transport call of both sides in one connection.
func traceCommand(args []string) (*IoTrace, error) {
	var s settings
	f := newFlags("trace", &s)
	client, server := f.String("client", "", ""), f.String("server", "", "")
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
	if err := supported(caps, MeasureIo, scenario); err != nil {
		return nil, err
	}
	if err := checkPeers(caps, *client, *server); err != nil {
		return nil, err
	}
	cr, err := loadCredentials(s.dataDir, scenario.Key)
	if err != nil {
		return nil, err
	}
	p := newPair(scenario, cr, true)
	defer p.close()
	return ioTrace(p)
}
