package main

// A server (crates/harness/src/net/serve.rs): worker goroutines, each locked to its own
// thread, share one listening socket, each with an event loop over the connections it
// accepted.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// stopCheck is how often a worker looks at the stop flag while nothing happens.
	stopCheck = 100 * time.Millisecond
	// acceptBatch is how many connections a worker accepts per wake-up before it serves the
	// ones it has.
	acceptBatch = 16
	// listenBacklog is Rust's TcpListener's.
	listenBacklog = 128
)

// serveCommand serves connections until SIGINT or SIGTERM: its first reply (on replies) says
// where it listens, its return the report.
func serveCommand(args []string, replies io.Writer) (*netReport, error) {
	var a netArgs
	f := flag.NewFlagSet("serve", flag.ContinueOnError)
	f.SetOutput(io.Discard)
	a.register(f)
	listenAddr := f.String("listen", "127.0.0.1:0", "")
	workers := f.Uint("workers", 0, "")
	response := f.String("response", "0", "")
	if err := f.Parse(args); err != nil {
		return nil, fmt.Errorf("serve: %v", err)
	}
	if f.NArg() > 0 {
		return nil, fmt.Errorf("serve: unexpected argument `%s`", f.Arg(0))
	}
	page, err := parsePage(*response)
	if err != nil {
		return nil, err
	}
	peer, err := a.setup(Server)
	if err != nil {
		return nil, err
	}
	listener, local, err := listen(*listenAddr)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(listener)
	var stop atomic.Bool
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-signals
		stop.Store(true)
	}()
	n := uint32(*workers)
	if n == 0 {
		n = uint32(runtime.NumCPU())
	}
	// One P per worker (main.go pins one for the in-memory measures).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(int(n))
	}
	line, _ := jsonLine(serving{Listening: local, Stack: stackID, Library: library(), Workers: n})
	if _, err := replies.Write(line); err != nil {
		return nil, fmt.Errorf("writing the reply: %v", err)
	}
	srv := &server{listener: listener, page: page, chunk: page.chunk(), ioTimeout: a.ioTimeout(), stop: &stop, workers: n}
	return srv.serve(peer), nil
}

// listen makes a non-blocking listening socket on addr (IP:PORT); returns it and the address
// it listens on.
func listen(addr string) (int, string, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return -1, "", fmt.Errorf("--listen: `%s` is not an address (IP:PORT): %v", addr, err)
	}
	family, sa := sockaddr(ap)
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err == nil {
		err = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	}
	if err == nil {
		err = syscall.Bind(fd, sa)
	}
	if err == nil {
		err = syscall.Listen(fd, listenBacklog)
	}
	var bound syscall.Sockaddr
	if err == nil {
		bound, err = syscall.Getsockname(fd)
	}
	if err != nil {
		if fd >= 0 {
			syscall.Close(fd)
		}
		return -1, "", fmt.Errorf("listening on %s: %v", addr, err)
	}
	switch b := bound.(type) {
	case *syscall.SockaddrInet4:
		ap = netip.AddrPortFrom(netip.AddrFrom4(b.Addr), uint16(b.Port))
	case *syscall.SockaddrInet6:
		ap = netip.AddrPortFrom(netip.AddrFrom16(b.Addr), uint16(b.Port))
	}
	return fd, ap.String(), nil
}

// sockaddr is the family and address of the socket calls.
func sockaddr(ap netip.AddrPort) (int, syscall.Sockaddr) {
	if ap.Addr().Is4() || ap.Addr().Is4In6() {
		return syscall.AF_INET, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().Unmap().As4()}
	}
	return syscall.AF_INET6, &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

type server struct {
	listener      int
	page          Page
	chunk         []byte
	ioTimeout     time.Duration
	stop          *atomic.Bool
	workers       uint32
	open, maxOpen atomic.Uint64
}

// workerTotals is one worker's share of the report.
type workerTotals struct {
	report *netReport
	// Unix times of its first and last connection's end.
	first, last float64
	ended       bool
	panicked    any
}

// serve runs the workers until stop is set and they have finished the connections in flight
// (each bounded by the io timeout). CPU time is the process's over that window (see
// README.md), resident memory its VmRSS before and VmHWM after.
func (srv *server) serve(peer *netPeer) *netReport {
	rssStart := procStatus("VmRSS")
	user0, sys0 := processCPU()
	totals := make([]*workerTotals, srv.workers)
	var wg sync.WaitGroup
	for i := range totals {
		totals[i] = &workerTotals{report: peer.report()}
		wg.Add(1)
		go func(t *workerTotals, p *netPeer) {
			defer wg.Done()
			// A worker's panic is the command's (run makes it a failed reply), once the others
			// have stopped.
			defer func() {
				if t.panicked = recover(); t.panicked != nil {
					srv.stop.Store(true)
				}
			}()
			runtime.LockOSThread()
			srv.worker(p, t)
		}(totals[i], peer.forLoop())
	}
	wg.Wait()
	for _, t := range totals {
		if t.panicked != nil {
			panic(t.panicked)
		}
	}
	user1, sys1 := processCPU()
	report := peer.report()
	report.Page = &srv.page
	report.Concurrency = srv.workers
	report.CPUUserSeconds, report.CPUSystemSeconds = (user1 - user0).Seconds(), (sys1 - sys0).Seconds()
	report.RSSStartBytes, report.RSSPeakBytes = rssStart, procStatus("VmHWM")
	report.MaxOpen = srv.maxOpen.Load()
	started, ended := 0.0, 0.0
	for _, t := range totals {
		r := t.report
		report.Connections += r.Connections
		report.Resumed += r.Resumed
		report.WithoutRequest += r.WithoutRequest
		for _, f := range r.Failures {
			report.Failed += f.Count
			report.Failures = addFailures(report.Failures, f)
		}
		report.Sockets.add(&r.Sockets)
		report.Polls += r.Polls
		report.HandshakeLatency.add(r.HandshakeLatency)
		if report.Negotiated == nil {
			report.Negotiated = r.Negotiated
		}
		if t.ended {
			if started == 0 || t.first < started {
				started = t.first
			}
			ended = max(ended, t.last)
		}
	}
	report.StartedUnix, report.EndedUnix = started, ended
	return report
}

type serveStage int

const (
	// Accepted; the handshake begins when the client hello arrives.
	stageHandshake serveStage = iota
	// Reading the request, up to its empty line.
	stageRequest
	// The response and close_notify are written; waiting for the client's close.
	stageClosing
)

func (s serveStage) during() string {
	return [...]string{"during the handshake", "before its request was complete", "before its close_notify"}[s]
}

type served struct {
	c                      *conn
	s                      *sock
	stage                  serveStage
	accepted, lastProgress time.Time
	// requested: some of the request has arrived; tail: its last four bytes so far, to find
	// its end (an empty line).
	requested      bool
	tail           [4]byte
	resumed        bool
	withoutRequest bool
}

func (srv *server) worker(p *netPeer, t *workerTotals) {
	r := t.report
	var live []*served
	var fds []pollFd
	buf := make([]byte, 16<<10)
	for {
		stopping := srv.stop.Load()
		if stopping && len(live) == 0 {
			break
		}
		fds = fds[:0]
		for _, c := range live {
			fds = append(fds, pollFd{fd: int32(c.s.fd), events: pollIn})
		}
		if !stopping {
			fds = append(fds, pollFd{fd: int32(srv.listener), events: pollIn})
		}
		if _, err := poll(fds, stopCheck, &r.Polls); err != nil {
			r.Failures = addFailures(r.Failures, failure{"poll: " + err.Error(), 1})
			break
		}
		// Served in reverse, so that removing one leaves the indices of the rest.
		for i := len(live) - 1; i >= 0; i-- {
			c := live[i]
			now := time.Now()
			var done bool
			var err error
			switch {
			case fds[i].revents != 0:
				c.lastProgress = now
				done, err = srv.advance(p, c, buf, r)
			case now.Sub(c.lastProgress) > srv.ioTimeout:
				err = fmt.Errorf("the client sent nothing for %v s %s", srv.ioTimeout.Seconds(), c.stage.during())
			}
			if !done && err == nil {
				continue
			}
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			p.release(c.c, c.s)
			c.s.shutdown()
			if err == nil {
				// Per-connection figures are of the connections that completed.
				r.Sockets.add(&c.s.counts)
				r.Connections++
				if c.resumed {
					r.Resumed++
				}
				if c.withoutRequest {
					r.WithoutRequest++
				}
			} else {
				r.Failures = addFailures(r.Failures, failure{err.Error(), 1})
			}
			// The window opens at the first end, not the first accept: the first connection
			// carries the load generator's one-off set-up.
			t.last = unixNow()
			if !t.ended {
				t.first, t.ended = t.last, true
			}
			srv.open.Add(^uint64(0))
		}
		if n := len(fds); n > 0 && fds[n-1].fd == int32(srv.listener) && fds[n-1].revents != 0 {
			live = srv.accept(p, live, r)
		}
	}
	r.Negotiated = p.negotiated()
}

// accept takes what waits, up to a batch; another worker may take it first.
func (srv *server) accept(p *netPeer, live []*served, r *netReport) []*served {
	for range acceptBatch {
		fd, _, errno := syscall.RawSyscall6(syscall.SYS_ACCEPT4,
			uintptr(srv.listener), 0, 0, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0, 0)
		if errno != 0 {
			// Nothing left (or another worker took it): part of the event loop's cost.
			r.Polls++
			return live
		}
		s := newSock(int(fd), srv.ioTimeout)
		s.counts.Other += 2 // accept4, setsockopt
		now := time.Now()
		open := srv.open.Add(1)
		for prev := srv.maxOpen.Load(); open > prev && !srv.maxOpen.CompareAndSwap(prev, open); prev = srv.maxOpen.Load() {
		}
		if err := syscall.SetsockoptInt(s.fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
			r.Failures = addFailures(r.Failures, failure{"setting TCP_NODELAY: " + err.Error(), 1})
			s.shutdown()
			srv.open.Add(^uint64(0))
			continue
		}
		live = append(live, &served{c: p.open(s), s: s, accepted: now, lastProgress: now})
	}
	return live
}

// advance moves a connection on with what arrived; true once it has ended cleanly.
func (srv *server) advance(p *netPeer, c *served, buf []byte, r *netReport) (bool, error) {
	if c.stage == stageHandshake {
		done, err := c.c.stepHandshake()
		switch {
		case err != nil && c.s.eof:
			return false, fmt.Errorf("the client closed the connection %s", c.stage.during())
		case err != nil:
			return false, fmt.Errorf("handshake: %s", oneLine(err))
		case !done:
			return false, nil
		}
		p.release(c.c, c.s)
		if c.resumed, err = p.check(c.c); err != nil {
			return false, errors.New(oneLine(err))
		}
		r.HandshakeLatency.record(time.Since(c.accepted))
		c.stage = stageRequest
		// The request may have come with the client's last handshake flight.
	}
	if c.stage == stageRequest {
		var err error
		for {
			var n int
			n, err = c.c.tls.Read(buf)
			if n > 0 {
				c.requested = true
				c.tail = lastFour(c.tail, buf[:n])
			}
			if err != nil {
				break
			}
		}
		switch {
		case !c.requested && (err == io.EOF || c.s.peerGone()):
			// The client left after the handshake without a request, as `openssl s_time`
			// does without -www: a connection that only shook hands, not a failure.
			c.withoutRequest = true
			return true, nil
		case err == io.EOF:
			return false, fmt.Errorf("the client closed the connection %s", c.stage.during())
		case err != errWouldBlock:
			return false, fmt.Errorf("reading the request: %s", oneLine(err))
		case c.tail != [4]byte{'\r', '\n', '\r', '\n'}:
			return srv.checkOpen(c)
		}
		if err := srv.respond(c); err != nil {
			return false, fmt.Errorf("writing the response: %s", oneLine(err))
		}
		c.stage = stageClosing
	}
	// The response and close_notify are written: a client may close its socket without
	// close_notify (as many HTTP clients do), or reset it (`openssl s_time` sets SO_LINGER to
	// 0 so that its closes leave no TIME_WAIT).
	n, err := c.c.tls.Read(c.c.one[:])
	switch {
	case n > 0:
		return false, errors.New(
			"reading the client's close_notify: received application data where close_notify was expected")
	case err == io.EOF || c.s.peerGone():
		return true, nil
	case err == errWouldBlock:
		return false, nil
	}
	return false, fmt.Errorf("reading the client's close_notify: %s", oneLine(err))
}

// respond writes the page and close_notify after it.
func (srv *server) respond(c *served) error {
	for range srv.page.Writes {
		if _, err := c.c.tls.Write(srv.chunk); err != nil {
			return err
		}
	}
	return c.c.tls.CloseWrite()
}

// checkOpen fails a connection whose client has closed its end before it was done.
func (srv *server) checkOpen(c *served) (bool, error) {
	if c.s.eof {
		return false, fmt.Errorf("the client closed the connection %s", c.stage.during())
	}
	return false, nil
}

// lastFour is the last four bytes of tail followed by more.
func lastFour(tail [4]byte, more []byte) [4]byte {
	if len(more) >= 4 {
		return [4]byte(more[len(more)-4:])
	}
	keep := 4 - len(more)
	var w [4]byte
	copy(w[:], tail[4-keep:])
	copy(w[keep:], more)
	return w
}
