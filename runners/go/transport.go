package main

// The in-memory transport (crates/harness/src/transport.rs): one byte pipe per direction,
// each side's endpoint reading from one and writing to the other. crypto/tls takes a net.Conn
// and blocks in Read; an endpoint's Read that finds its pipe empty either hands the turn back
// to the driver (during a handshake, run as a coroutine: see handshaker) or says "would block"
// with a temporary net.Error, after which crypto/tls keeps its state and reads again on the
// next call (as after a read deadline). Either way the empty read is a call, as EAGAIN is on a
// socket, where Go's runtime makes exactly that read before it parks the goroutine.

import (
	"errors"
	"net"
	"time"
)

// errWouldBlock is what an endpoint's Read returns when nothing waits and the side is not in
// a handshake: temporary, so crypto/tls does not make it the connection's error.
var errWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "would block: no bytes from the peer yet" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

var errStopped = errors.New("the handshake was stopped")

// pipeCapacity is each pipe's starting capacity: more than any flight or record in flight at
// once, so that the pipes do not grow inside a library's call (their memory is the harness's).
const pipeCapacity = 64 << 10

// pipe holds the bytes in flight in one direction: buf[start:].
type pipe struct {
	buf   []byte
	start int
}

func (p *pipe) pending() []byte { return p.buf[p.start:] }

func (p *pipe) consume(n int) {
	p.start += n
	if p.start == len(p.buf) {
		p.buf, p.start = p.buf[:0], 0
	}
}

func (p *pipe) push(b []byte) {
	if p.start > 0 && len(p.buf)+len(b) > cap(p.buf) {
		n := copy(p.buf, p.buf[p.start:])
		p.buf, p.start = p.buf[:n], 0
	}
	p.buf = append(p.buf, b...)
}

// link is the two pipes between a client and a server, and each side's endpoint on them.
type link struct {
	toServer, toClient pipe
	ends               [2]endpoint
	log                *ioLog // nil unless the io measure records every call
}

func newLink(withLog bool) *link {
	l := newLinkCap(pipeCapacity)
	if withLog {
		l.log = &ioLog{}
		l.ends[Client].log, l.ends[Server].log = l.log, l.log
	}
	return l
}

// newLinkCap is a link without a log whose pipes start with capacity bytes.
func newLinkCap(capacity int) *link {
	l := &link{toServer: pipe{buf: make([]byte, 0, capacity)}, toClient: pipe{buf: make([]byte, 0, capacity)}}
	l.ends[Client] = endpoint{side: Client, rx: &l.toClient, tx: &l.toServer, log: l.log}
	l.ends[Server] = endpoint{side: Server, rx: &l.toServer, tx: &l.toClient, log: l.log}
	return l
}

func (l *link) end(side Side) *endpoint { return &l.ends[side] }

// pipeTo is the pipe side reads from.
func (l *link) pipeTo(side Side) *pipe { return l.ends[side].rx }

func (l *link) unreadBy(side Side) int { return len(l.pipeTo(side).pending()) }

func (l *link) inFlight() int { return l.unreadBy(Client) + l.unreadBy(Server) }

// takeWrittenBy takes what side wrote and nobody read (to relay it to the peer process).
func (l *link) takeWrittenBy(side Side) []byte {
	p := l.ends[side].tx
	taken := append([]byte(nil), p.pending()...)
	p.consume(len(taken))
	return taken
}

// deliverTo hands side bytes as if its peer had written them (relayed from the peer process).
func (l *link) deliverTo(side Side, b []byte) { l.pipeTo(side).push(b) }

// clear drops what is in flight, between two independent connections.
func (l *link) clear() {
	for _, p := range []*pipe{&l.toServer, &l.toClient} {
		p.buf, p.start = p.buf[:0], 0
	}
	for i := range l.ends {
		l.ends[i].blocking = nil
	}
	if l.log != nil {
		l.log.restartStreams()
	}
}

// endpoint is one side's net.Conn on a link.
type endpoint struct {
	side   Side
	rx, tx *pipe
	log    *ioLog
	// blocking is set while the side's handshake runs as a coroutine: a read that finds
	// nothing yields to the driver instead of saying "would block".
	blocking *handshaker
}

func (e *endpoint) Read(b []byte) (int, error) {
	for {
		if p := e.rx.pending(); len(p) > 0 {
			n := copy(b, p)
			e.rx.consume(n)
			if e.log != nil {
				e.log.read(e.side, len(b), n)
			}
			return n, nil
		}
		if e.log != nil {
			e.log.read(e.side, len(b), -1)
		}
		if e.blocking == nil {
			return 0, errWouldBlock
		}
		if !e.blocking.wait() {
			return 0, errStopped
		}
	}
}

func (e *endpoint) yieldTo(h *handshaker) { e.blocking = h }

func (e *endpoint) Write(b []byte) (int, error) {
	e.tx.push(b)
	if e.log != nil {
		e.log.write(e.side, b)
	}
	return len(b), nil
}

// Close does nothing: crypto/tls's Close would shut the transport, but the drivers drop
// connections without it, and close_notify is sent with CloseWrite.
func (e *endpoint) Close() error                     { return nil }
func (e *endpoint) LocalAddr() net.Addr              { return memoryAddr(e.side) }
func (e *endpoint) RemoteAddr() net.Addr             { return memoryAddr(e.side.peer()) }
func (e *endpoint) SetDeadline(time.Time) error      { return nil }
func (e *endpoint) SetReadDeadline(time.Time) error  { return nil }
func (e *endpoint) SetWriteDeadline(time.Time) error { return nil }

type memoryAddr Side

func (memoryAddr) Network() string  { return "memory" }
func (a memoryAddr) String() string { return Side(a).String() }
