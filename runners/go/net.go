package main

// The network mode (crates/harness/src/net): `serve` runs crypto/tls servers on a TCP socket,
// `load` runs crypto/tls clients against any TLS server. Each connection does what the Rust
// runners' do: the handshake and its gates, a request (REQUEST), a response of a set size
// (Page), close_notify both ways. The reply is the harness's NetReport, field for field.
//
// As in the Rust runners, sockets are non-blocking and each thread runs its connections in an
// event loop on poll, calling into crypto/tls only when a socket is readable: the socket is
// crypto/tls's net.Conn (sock, netsock.go), each of whose reads and writes is one syscall,
// counted; a handshake runs as a coroutine that a read finding nothing suspends (see
// handshaker), so no goroutine and no Go netpoller stand between a connection and its socket.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// request is what a client sends: a request any HTTP server answers.
var request = []byte("GET / HTTP/1.0\r\n\r\n")

// pageWriteSize is the largest single write of a page given by its size alone.
const pageWriteSize = 16 << 10

// defaultIoTimeout: a connection whose peer sends nothing this long fails.
const defaultIoTimeout = 10 * time.Second

// plainStacks are the plain TCP baselines, which the Rust runners serve.
var plainStacks = []string{"tcp", "tcp-buffered"}

// Page is a response: Writes application writes of Size bytes, each the pattern i % 251.
type Page struct {
	Writes uint64 `json:"writes"`
	Size   uint64 `json:"size"`
}

func (p Page) bytes() uint64 { return p.Writes * p.Size }

// chunk is the bytes of each write.
func (p Page) chunk() []byte {
	b := make([]byte, p.Size)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// parsePage reads `0`, `10KiB`, `512KiB`, `100MiB` (in 16 KiB writes) or `1000x64` (1,000
// writes of 64 bytes), as the harness's Page::from_str.
func parsePage(text string) (Page, error) {
	invalid := fmt.Errorf("`%s` is not a response size: "+
		"give bytes (0, 1KiB, 10KiB, 512KiB, 10MiB, 100MiB) or COUNTxBYTES (1000x64)", text)
	size := func(t string) (uint64, error) {
		i := strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' })
		number, unit := t, ""
		if i >= 0 {
			number, unit = t[:i], t[i:]
		}
		factor := map[string]uint64{
			"": 1, "B": 1,
			"KiB": 1 << 10, "K": 1 << 10, "k": 1 << 10,
			"MiB": 1 << 20, "M": 1 << 20,
			"GiB": 1 << 30, "G": 1 << 30,
		}[unit]
		n, err := strconv.ParseUint(number, 10, 64)
		if factor == 0 || err != nil || n > math.MaxUint64/factor {
			return 0, invalid
		}
		return n * factor, nil
	}
	if count, each, ok := strings.Cut(text, "x"); ok {
		writes, err := strconv.ParseUint(count, 10, 64)
		if err != nil {
			return Page{}, invalid
		}
		n, err := size(each)
		if err != nil {
			return Page{}, err
		}
		if n == 0 || n > 1<<20 {
			return Page{}, fmt.Errorf("`%s`: each write must be 1 byte to 1 MiB", text)
		}
		return Page{Writes: writes, Size: n}, nil
	}
	total, err := size(text)
	switch {
	case err != nil:
		return Page{}, err
	case total == 0:
		return Page{}, nil
	case total%pageWriteSize == 0:
		return Page{Writes: total / pageWriteSize, Size: pageWriteSize}, nil
	case total < pageWriteSize:
		return Page{Writes: 1, Size: total}, nil
	}
	return Page{}, fmt.Errorf("`%s`: a response over 16 KiB must be a multiple of 16 KiB (or give COUNTxBYTES)", text)
}

// socketCounts are the syscalls on one socket, and what went through it (net/socket.rs).
type socketCounts struct {
	// read(2) calls (recvfrom here), those that found nothing (EAGAIN) and end of stream
	// included.
	Reads      uint64 `json:"reads"`
	EmptyReads uint64 `json:"empty_reads"`
	// write(2) calls (sendto here), partial and EAGAIN ones included.
	Writes uint64 `json:"writes"`
	// poll(2) calls inside a write, waiting for room in the send buffer.
	WriteWaits     uint64 `json:"write_waits"`
	BytesRead      uint64 `json:"bytes_read"`
	BytesWritten   uint64 `json:"bytes_written"`
	RecordsWritten uint64 `json:"records_written"`
	// socket, connect or accept4, setsockopt, getsockopt, close.
	Other uint64 `json:"other"`
}

func (c *socketCounts) add(o *socketCounts) {
	c.Reads += o.Reads
	c.EmptyReads += o.EmptyReads
	c.Writes += o.Writes
	c.WriteWaits += o.WriteWaits
	c.BytesRead += o.BytesRead
	c.BytesWritten += o.BytesWritten
	c.RecordsWritten += o.RecordsWritten
	c.Other += o.Other
}

type failure struct {
	Reason string `json:"reason"`
	Count  uint64 `json:"count"`
}

// maxFailureReasons: distinct reasons kept; further ones are counted under the last.
const maxFailureReasons = 16

func addFailures(failures []failure, f failure) []failure {
	for i := range failures {
		if failures[i].Reason == f.Reason {
			failures[i].Count += f.Count
			return failures
		}
	}
	if len(failures) < maxFailureReasons {
		return append(failures, f)
	}
	failures[len(failures)-1].Count += f.Count
	return failures
}

// netReport is the harness's NetReport: what one side measured over its connections.
type netReport struct {
	Side             Side         `json:"side"`
	Stack            string       `json:"stack"`
	Library          string       `json:"library"`
	Scenario         *string      `json:"scenario"`
	Page             *Page        `json:"page"`
	Concurrency      uint32       `json:"concurrency"`
	Negotiated       *string      `json:"negotiated"`
	Connections      uint64       `json:"connections"`
	Resumed          uint64       `json:"resumed"`
	WithoutRequest   uint64       `json:"without_request,omitempty"`
	Failed           uint64       `json:"failed"`
	Failures         []failure    `json:"failures"`
	StartedUnix      float64      `json:"started_unix"`
	EndedUnix        float64      `json:"ended_unix"`
	CPUUserSeconds   float64      `json:"cpu_user_seconds"`
	CPUSystemSeconds float64      `json:"cpu_system_seconds"`
	Sockets          socketCounts `json:"sockets"`
	Polls            uint64       `json:"polls"`
	HandshakeLatency *histogram   `json:"handshake_latency"`
	FirstByteLatency *histogram   `json:"first_byte_latency"`
	RSSStartBytes    *uint64      `json:"rss_start_bytes"`
	RSSPeakBytes     *uint64      `json:"rss_peak_bytes"`
	MaxOpen          uint64       `json:"max_open"`
}

// netReply is the reply to load, and serve's last: {"status":"ok", ...report} or the reason.
type netReply struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	*netReport
}

// serving is serve's first reply, once it listens.
type serving struct {
	Listening string `json:"listening"`
	Stack     string `json:"stack"`
	Library   string `json:"library"`
	Workers   uint32 `json:"workers"`
}

func netReplyOf(report *netReport, err error) netReply {
	if err != nil {
		r := replyOf(nil, err)
		return netReply{Status: r.Status, Reason: r.Reason}
	}
	return netReply{Status: "ok", netReport: report}
}

// netArgs are the flags both ends take.
type netArgs struct {
	stack, scenario, dataDir string
	ioTimeoutMs              uint64
}

func (a *netArgs) register(f interface {
	StringVar(*string, string, string, string)
	Uint64Var(*uint64, string, uint64, string)
}) {
	f.StringVar(&a.stack, "stack", "", "")
	f.StringVar(&a.scenario, "scenario", "", "")
	f.StringVar(&a.dataDir, "data-dir", "", "")
	f.Uint64Var(&a.ioTimeoutMs, "io-timeout-ms", uint64(defaultIoTimeout/time.Millisecond), "")
}

func (a *netArgs) ioTimeout() time.Duration { return time.Duration(a.ioTimeoutMs) * time.Millisecond }

// setup checks the target as the harness's net_setup does, in the same order, and makes this
// side's config.
func (a *netArgs) setup(side Side) (*netPeer, error) {
	plain := false
	for _, p := range plainStacks {
		plain = plain || a.stack == p
	}
	switch {
	case a.stack == "":
		return nil, errors.New("--stack is required")
	case plain && a.scenario != "":
		return nil, unsupported("%s is plain TCP: it has no TLS handshake, so no scenario (%s)", a.stack, a.scenario)
	case plain:
		return nil, fmt.Errorf(
			"stack `%s` is not in this runner (it has: %s): the plain TCP baselines (%s) are served by the Rust runners",
			a.stack, stackID, strings.Join(plainStacks, ", "))
	case a.scenario == "":
		return nil, fmt.Errorf("%s is a TLS stack: name its handshake with --scenario", a.stack)
	}
	scenario, err := ParseScenario(a.scenario)
	if err != nil {
		return nil, err
	}
	if err := checkNetKind(scenario); err != nil {
		return nil, err
	}
	if a.dataDir == "" {
		a.dataDir = defaultDataDir()
	}
	cr, err := loadCredentials(a.dataDir, scenario.Key)
	if err != nil {
		return nil, err
	}
	if a.stack != stackID {
		return nil, fmt.Errorf("stack `%s` is not in this runner (it has: %s; plain TCP, %s, is in the Rust runners)",
			a.stack, stackID, strings.Join(plainStacks, ", "))
	}
	if err := capabilities().check(scenario); err != nil {
		return nil, err
	}
	return &netPeer{side: side, scenario: scenario, cfg: newConfig(side, scenario, cr)}, nil
}

// checkNetKind: the network mode runs handshake scenarios; what follows each handshake is the
// response.
func checkNetKind(s Scenario) error {
	switch s.Kind {
	case HandshakeFull, HandshakeResumeID, HandshakeResumeTicket:
		return nil
	}
	return unsupported("the network mode runs handshake scenarios "+
		"(handshake-full, handshake-resume-id, handshake-resume-ticket), not %s: "+
		"the response after each handshake is set with --response", s.Kind)
}

// netPeer is one side's crypto/tls config, its gates, and its idle handshake coroutines. One
// per event loop (thread): nothing in it is shared.
type netPeer struct {
	side     Side
	scenario Scenario
	cfg      *sideConfig
	gates    gates
	// Client: whether every handshake must resume, once the warm-up has given it sessions
	// (nil during the warm-up: either). The server cannot tell a warm-up connection from a
	// measured one: it counts resumption, requiring it only not to happen in a full scenario.
	expectResumed *bool
	idle          []*handshaker
}

// forLoop is a copy for another event loop, sharing the tls.Config (safe for concurrent use,
// and its session ticket keys are then the same for all).
func (p *netPeer) forLoop() *netPeer {
	return &netPeer{side: p.side, scenario: p.scenario, cfg: p.cfg}
}

// open makes a connection on s, its handshake on an idle coroutine.
func (p *netPeer) open(s *sock) *conn {
	var hs *handshaker
	if n := len(p.idle); n > 0 {
		hs, p.idle = p.idle[n-1], p.idle[:n-1]
	} else {
		hs = newHandshaker()
	}
	c := p.cfg.openWith(s, hs)
	c.create()
	return c
}

// release takes back the connection's coroutine once its handshake has ended; one still
// running (a connection that failed or timed out mid-handshake) is ended first: its socket
// is closed, so crypto/tls's next read fails and Handshake returns.
func (p *netPeer) release(c *conn, s *sock) {
	if c.hs == nil {
		return
	}
	if c.hs.running && c.hs.conn == c.tls {
		s.closed = true
		if finished, _ := c.hs.step(c.tls); !finished {
			c.hs = nil // still suspended (a closed socket fails every read, so this is not expected): never reused
			return
		}
	}
	p.idle = append(p.idle, c.hs)
	c.hs = nil
}

// check passes a completed handshake through the gates; returns whether it resumed.
func (p *netPeer) check(c *conn) (bool, error) {
	got, err := c.negotiated()
	if err != nil {
		return false, failed(p.side, "negotiated parameters", err)
	}
	expect := got.resumed && p.scenario.Kind.isResumption()
	if p.side == Client && p.expectResumed != nil {
		expect = *p.expectResumed
	}
	if err := p.gates.check(p.side, p.scenario, got, expect); err != nil {
		return false, err
	}
	return got.resumed, nil
}

// negotiated is what the last checked handshake negotiated, as this side saw it.
func (p *netPeer) negotiated() *string {
	if n := p.gates.seen[p.side]; n != nil {
		s := n.String()
		return &s
	}
	return nil
}

func (p *netPeer) report() *netReport {
	name := p.scenario.Name()
	return &netReport{
		Side: p.side, Stack: stackID, Library: library(), Scenario: &name, Failures: []failure{},
		HandshakeLatency: newLatency(), FirstByteLatency: newLatency(),
	}
}

// pollFd is struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const (
	pollIn  = 0x1
	pollOut = 0x4
)

// poll is one poll over fds (ppoll(2), which every Linux architecture has), retried on EINTR;
// each call is counted in polls. It blocks, so it is a Syscall: the runtime may run other
// goroutines meanwhile.
func poll(fds []pollFd, timeout time.Duration, polls *uint64) (int, error) {
	var p unsafe.Pointer
	if len(fds) > 0 {
		p = unsafe.Pointer(&fds[0])
	}
	for {
		*polls++
		ts := syscall.NsecToTimespec(int64(timeout))
		n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL,
			uintptr(p), uintptr(len(fds)), uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		switch errno {
		case 0:
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		return 0, errno
	}
}

// processCPU is the process's CPU time so far, user and system: every thread's, the garbage
// collector's and the scheduler's included (they work for the connections too).
func processCPU() (user, system time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }

// procStatus is a /proc/self/status field in bytes (VmRSS, VmHWM), as the harness reads it.
func procStatus(name string) *uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if rest, ok := bytes.CutPrefix(lines.Bytes(), []byte(name+":")); ok {
			kib, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(rest)), "kB")), 10, 64)
			if err != nil {
				return nil
			}
			b := kib * 1024
			return &b
		}
	}
	return nil
}

// oneLine is the first line of an error, without trailing punctuation.
func oneLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return strings.TrimRight(strings.TrimSpace(line), ".:")
}
