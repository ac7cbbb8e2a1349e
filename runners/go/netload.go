package main

// The load generator (crates/harness/src/net/load.rs): one thread with up to `concurrency`
// connections in flight, each a new connection from connect to close, until a count or a
// duration is reached.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/netip"
	"syscall"
	"time"
)

// defaultLoadDuration bounds a load given neither a count nor a duration.
const defaultLoadDuration = 10 * time.Second

type loadSettings struct {
	connect netip.AddrPort
	// connections: stop after this many measured connections (0: only the duration bounds
	// it); duration: start none after this long (0: only the count bounds it).
	connections uint64
	duration    time.Duration
	concurrency int
	// page: the response the server sends, when known: each one is checked (length and
	// content).
	page      *Page
	ioTimeout time.Duration
}

func loadCommand(args []string) (*netReport, error) {
	var a netArgs
	f := flag.NewFlagSet("load", flag.ContinueOnError)
	f.SetOutput(io.Discard)
	a.register(f)
	connect := f.String("connect", "", "")
	connections := f.Uint64("connections", 0, "")
	duration := f.Float64("duration", 0, "")
	concurrency := f.Uint("concurrency", 1, "")
	response := f.String("response", "", "")
	if err := f.Parse(args); err != nil {
		return nil, fmt.Errorf("load: %v", err)
	}
	if f.NArg() > 0 {
		return nil, fmt.Errorf("load: unexpected argument `%s`", f.Arg(0))
	}
	if *connect == "" {
		return nil, errors.New("load: --connect is required")
	}
	addr, err := netip.ParseAddrPort(*connect)
	if err != nil {
		return nil, fmt.Errorf("--connect: `%s` is not an address (IP:PORT): %v", *connect, err)
	}
	if *duration < 0 || math.IsNaN(*duration) || math.IsInf(*duration, 0) {
		return nil, errors.New("--duration must be a positive number of seconds")
	}
	settings := loadSettings{
		connect: addr, connections: *connections, duration: time.Duration(*duration * float64(time.Second)),
		concurrency: max(int(*concurrency), 1), ioTimeout: a.ioTimeout(),
	}
	if *response != "" {
		page, err := parsePage(*response)
		if err != nil {
			return nil, err
		}
		settings.page = &page
	}
	peer, err := a.setup(Client)
	if err != nil {
		return nil, err
	}
	return load(peer, settings), nil
}

// load runs `concurrency` connections at once to warm up (and, when resuming, to give the
// client a session), then the measured ones. Failed connections are counted with their
// reasons; they never stop the others. CPU time is the process's over the measured part.
func load(peer *netPeer, settings loadSettings) *netReport {
	g := newGenerator(peer, settings)
	g.run(uint64(settings.concurrency), settings.concurrency, time.Now().Add(2*settings.ioTimeout))
	// The warm-up is over: from now on a resumption scenario's client must resume.
	resume := peer.scenario.Kind.isResumption()
	peer.expectResumed = &resume
	warmFailures := g.r.Failures
	g.r = peer.report()
	r := g.r
	r.StartedUnix = unixNow()
	user0, sys0 := processCPU()
	started := time.Now()
	deadline := started.Add(defaultLoadDuration)
	switch {
	case settings.duration > 0:
		deadline = started.Add(settings.duration)
	case settings.connections > 0:
		deadline = started.Add(24 * time.Hour)
	}
	count := settings.connections
	if count == 0 {
		count = math.MaxUint64
	}
	g.run(count, settings.concurrency, deadline)
	user1, sys1 := processCPU()
	r.EndedUnix = unixNow()
	r.CPUUserSeconds, r.CPUSystemSeconds = (user1 - user0).Seconds(), (sys1 - sys0).Seconds()
	failures := warmFailures
	for _, f := range r.Failures {
		failures = addFailures(failures, f)
	}
	r.Failures, r.Failed = failures, 0
	for _, f := range failures {
		r.Failed += f.Count
	}
	r.Page = settings.page
	r.Concurrency = uint32(settings.concurrency)
	r.MaxOpen = uint64(settings.concurrency)
	r.Negotiated = peer.negotiated()
	return r
}

type loadStage int

const (
	stageConnecting loadStage = iota
	stageClientHandshake
	// The request is sent; reading the response up to the server's close_notify.
	stageResponse
)

func (s loadStage) during() string {
	return [...]string{"while connecting", "during the handshake", "during the response"}[s]
}

type dialled struct {
	c                     *conn
	s                     *sock
	stage                 loadStage
	started, lastProgress time.Time
	received              uint64
	// differsAt is the first byte of the response that is not the page's (-1: none yet).
	differsAt int64
}

type generator struct {
	peer     *netPeer
	settings loadSettings
	family   int
	sa       syscall.Sockaddr
	chunk    []byte // one write of the expected page
	r        *netReport
	buf      []byte
	// hardStop: connections still in flight then fail (the run's deadline plus the io timeout).
	hardStop time.Time
}

func newGenerator(peer *netPeer, settings loadSettings) *generator {
	g := &generator{peer: peer, settings: settings, r: peer.report(), buf: make([]byte, 16<<10)}
	g.family, g.sa = sockaddr(settings.connect)
	if settings.page != nil {
		g.chunk = settings.page.chunk()
	}
	return g
}

// run makes count connections, concurrency at a time, starting none after deadline; those in
// flight then get the io timeout to finish.
func (g *generator) run(count uint64, concurrency int, deadline time.Time) {
	live := make([]*dialled, 0, concurrency)
	fds := make([]pollFd, 0, concurrency)
	var started uint64
	g.hardStop = deadline.Add(g.settings.ioTimeout)
	wait := min(g.settings.ioTimeout, 100*time.Millisecond)
	for {
		for len(live) < concurrency && started < count && time.Now().Before(deadline) {
			started++
			d, err := g.dial()
			if err != nil {
				g.r.Failures = addFailures(g.r.Failures, failure{err.Error(), 1})
				continue
			}
			live = append(live, d)
		}
		if len(live) == 0 {
			return
		}
		fds = fds[:0]
		for _, d := range live {
			events := int16(pollIn)
			if d.stage == stageConnecting {
				events = pollOut
			}
			fds = append(fds, pollFd{fd: int32(d.s.fd), events: events})
		}
		if _, err := poll(fds, wait, &g.r.Polls); err != nil {
			for _, d := range live {
				g.end(d, fmt.Errorf("poll: %v", err))
			}
			return
		}
		now := time.Now()
		for i := len(live) - 1; i >= 0; i-- {
			d := live[i]
			var done bool
			var err error
			switch {
			case now.After(g.hardStop):
				err = stillOpen(d.stage)
			case fds[i].revents != 0:
				d.lastProgress = now
				done, err = g.advance(d)
			case now.Sub(d.lastProgress) > g.settings.ioTimeout:
				err = fmt.Errorf("the server sent nothing for %v s %s", g.settings.ioTimeout.Seconds(), d.stage.during())
			}
			if !done && err == nil {
				continue
			}
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			g.end(d, err)
		}
	}
}

func stillOpen(s loadStage) error {
	return fmt.Errorf("still open when the load's time ran out (%s)", s.during())
}

// end drops a connection that completed (its socket's counts are added: per-connection
// figures are of the connections that completed) or failed.
func (g *generator) end(d *dialled, err error) {
	g.peer.release(d.c, d.s)
	d.s.shutdown()
	if err != nil {
		g.r.Failures = addFailures(g.r.Failures, failure{err.Error(), 1})
		return
	}
	g.r.Sockets.add(&d.s.counts)
	g.r.Connections++
}

// dial starts a connection: a non-blocking socket whose connect returns at once
// (EINPROGRESS).
func (g *generator) dial() (*dialled, error) {
	started := time.Now()
	fd, err := syscall.Socket(g.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("creating a socket: %v", err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("setting TCP_NODELAY: %v", err)
	}
	if err := syscall.Connect(fd, g.sa); err != nil && err != syscall.EINPROGRESS {
		syscall.Close(fd)
		return nil, fmt.Errorf("connecting to %s: %v", g.settings.connect, err)
	}
	s := newSock(fd, g.settings.ioTimeout)
	s.counts.Other += 3 // socket, setsockopt, connect
	return &dialled{c: g.peer.open(s), s: s, started: started, lastProgress: started, differsAt: -1}, nil
}

// advance moves a connection on with what its socket says; true once it has ended cleanly.
func (g *generator) advance(d *dialled) (bool, error) {
	if d.stage == stageConnecting {
		d.s.counts.Other++ // getsockopt(SO_ERROR)
		code, err := syscall.GetsockoptInt(d.s.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err == nil && code != 0 {
			err = syscall.Errno(code)
		}
		if err != nil {
			return false, fmt.Errorf("connecting to %s: %v", g.settings.connect, err)
		}
		d.stage = stageClientHandshake
	}
	if d.stage == stageClientHandshake {
		done, err := d.c.stepHandshake()
		switch {
		case err != nil && d.s.eof:
			return g.checkOpen(d)
		case err != nil:
			return false, fmt.Errorf("handshake: %s", oneLine(err))
		case !done:
			return g.checkOpen(d)
		}
		g.r.HandshakeLatency.record(time.Since(d.started))
		g.peer.release(d.c, d.s)
		if _, err := d.c.tls.Write(request); err != nil {
			return false, fmt.Errorf("sending the request: %s", oneLine(err))
		}
		d.stage = stageResponse
	}
	for reads := 1; ; reads++ {
		// A server that streams without end must not hold the generator past its hard stop.
		if reads%64 == 0 && time.Now().After(g.hardStop) {
			return false, stillOpen(d.stage)
		}
		n, err := d.c.tls.Read(g.buf)
		if n > 0 {
			if d.received == 0 {
				g.r.FirstByteLatency.record(time.Since(d.started))
			}
			g.compare(d, g.buf[:n])
			d.received += uint64(n)
		}
		switch {
		case err == nil:
			continue
		case err == errWouldBlock:
			return false, nil
		case d.s.eof:
			// crypto/tls reads no further than a close_notify, so an end of stream it found
			// came before any: the response was cut short.
			return g.checkOpen(d)
		case err != io.EOF:
			return false, fmt.Errorf("reading the response: %s", oneLine(err))
		}
		break // close_notify
	}
	// The gates once the server has said all it will: TLS 1.3 tickets arrive after the
	// handshake, and the client reports whether one did.
	resumed, err := g.peer.check(d.c)
	if err != nil {
		return false, errors.New(oneLine(err))
	}
	if resumed {
		g.r.Resumed++
	}
	if page := g.settings.page; page != nil {
		switch {
		case d.received != page.bytes():
			return false, fmt.Errorf("the response: gate failed: sent %d bytes, received %d", page.bytes(), d.received)
		case d.differsAt >= 0:
			return false, fmt.Errorf("the response: gate failed: "+
				"received %d bytes whose content differs from the page's from byte %d", d.received, d.differsAt)
		}
	}
	if err := d.c.tls.CloseWrite(); err != nil {
		return false, fmt.Errorf("sending close_notify: %s", oneLine(err))
	}
	return true, nil
}

// compare checks the response's bytes from d.received on against the page's (each write is
// the same chunk), keeping where they first differ.
func (g *generator) compare(d *dialled, got []byte) {
	page := g.settings.page
	if page == nil || d.differsAt >= 0 {
		return
	}
	at := d.received
	for len(got) > 0 && at < page.bytes() {
		offset := at % page.Size
		want := g.chunk[offset:min(page.Size, offset+uint64(len(got)))]
		if !bytes.Equal(got[:len(want)], want) {
			for i := range want {
				if got[i] != want[i] {
					d.differsAt = int64(at) + int64(i)
					return
				}
			}
		}
		got, at = got[len(want):], at+uint64(len(want))
	}
}

// checkOpen fails a connection whose server has closed its end before it was done.
func (g *generator) checkOpen(d *dialled) (bool, error) {
	if d.s.eof {
		return false, fmt.Errorf("the server closed the connection %s (%d bytes of response)", d.stage.during(), d.received)
	}
	return false, nil
}
