package main

// One side's connection as the drivers see it (the harness's Connection trait): calls that
// never block. crypto/tls's Handshake is one blocking function; it runs as a coroutine that a
// read of an empty pipe suspends. After the handshake, reads say "would block" instead, so
// Read, Write and CloseWrite are plain calls on the driver's goroutine.

import (
	"crypto/tls"
	"errors"
	"io"
	"iter"
	"net"
)

// handshaker runs one side's handshakes as a coroutine (iter.Pull): when crypto/tls reads and
// the peer's next flight is not there yet, the endpoint yields, and the driver resumes the
// handshake where it stopped when the side's next turn comes. A coroutine runs on the thread
// of the goroutine that resumes it, so only one side ever runs, on the driver's thread, and
// that thread's CPU clock sees the running side's work alone. One per side, reused for each
// of its connections.
type handshaker struct {
	next    func() (struct{}, bool)
	end     func()
	yield   func(struct{}) bool
	conn    *tls.Conn
	err     error
	running bool
}

func newHandshaker() *handshaker {
	h := &handshaker{}
	// The coroutine lives as long as the process, unless its owner stops it (memory-N's, one per
	// connection).
	h.next, h.end = iter.Pull(func(yield func(struct{}) bool) {
		h.yield = yield
		for {
			h.err = h.conn.Handshake()
			h.running = false
			if !yield(struct{}{}) {
				return
			}
		}
	})
	return h
}

// step runs conn's handshake until it completes (true, and its error) or waits for bytes.
func (h *handshaker) step(conn *tls.Conn) (bool, error) {
	switch {
	case !h.running:
		h.conn, h.running = conn, true
	case h.conn != conn:
		return true, errors.New("internal error: another connection's handshake is still running")
	}
	h.next()
	if h.running {
		return false, nil
	}
	return true, h.err
}

// release lets go of the last connection whose handshake has ended, so that the coroutine holds
// no connection alive.
func (h *handshaker) release() {
	if !h.running {
		h.conn, h.err = nil, nil
	}
}

// stop ends the coroutine (a handshake still running sees its reads fail).
func (h *handshaker) stop() { h.end() }

// wait suspends the running handshake until the driver resumes it; false if it was stopped.
func (h *handshaker) wait() bool { return h.yield(struct{}{}) }

// conn is one side's connection.
type conn struct {
	side Side
	cfg  *sideConfig
	ep   transport
	hs   *handshaker // runs this connection's handshake
	tls  *tls.Conn
	done bool
	puts int // the client's ticket store's count when the connection began
	one  [1]byte
}

// transport is what a connection's crypto/tls runs on: an in-memory endpoint, or a socket
// (network mode). While a handshake runs, a read that finds nothing yields to its coroutine.
type transport interface {
	net.Conn
	yieldTo(h *handshaker)
}

// open prepares a connection on ep (the harness's part, outside any clock); create makes the
// library's connection (the side's part). Its handshake runs on the side's one coroutine.
func (c *sideConfig) open(ep transport) *conn {
	return c.openWith(ep, c.hs)
}

// openWith is open with a coroutine of the caller's (the network mode has one per connection
// in flight).
func (c *sideConfig) openWith(ep transport, hs *handshaker) *conn {
	cn := &conn{side: c.side, cfg: c, ep: ep, hs: hs}
	if c.cache != nil {
		cn.puts = c.cache.puts
	}
	return cn
}

func (c *conn) create() {
	if c.side == Client {
		c.tls = tls.Client(c.ep, c.cfg.tls)
	} else {
		c.tls = tls.Server(c.ep, c.cfg.tls)
	}
}

// handshake moves the handshake on as far as the bytes that arrived allow, and returns true
// once this side has completed it; after that it reads what arrives (session tickets).
func (c *conn) handshake() (bool, error) {
	if !c.done {
		finished, err := c.stepHandshake()
		if !finished || err != nil || c.side == Server {
			return finished && err == nil, err
		}
		// A TLS 1.3 server's tickets may already sit in crypto/tls's read buffer (it reads
		// ahead), where only Read processes them: the client reads now, as an application
		// reads after its handshake.
	}
	return true, c.drain()
}

// stepHandshake runs the handshake's coroutine until it completes (true) or waits for bytes.
func (c *conn) stepHandshake() (bool, error) {
	c.ep.yieldTo(c.hs)
	finished, err := c.hs.step(c.tls)
	if !finished {
		return false, nil
	}
	c.ep.yieldTo(nil)
	c.done = err == nil
	return true, err
}

// drain reads what arrived after the handshake, which must not be application data.
func (c *conn) drain() error {
	n, err := c.tls.Read(c.one[:])
	switch {
	case n > 0:
		return errors.New("application data arrived before the handshake was over")
	case err == errWouldBlock:
		return nil
	}
	return err
}

// send encrypts all of data and writes its records.
func (c *conn) send(data []byte) error {
	_, err := c.tls.Write(data)
	return err
}

// receive decrypts into buf what the records that arrived hold; 0 when nothing more is there.
func (c *conn) receive(buf []byte) (int, error) {
	n, err := c.tls.Read(buf)
	if err == errWouldBlock {
		return 0, nil
	}
	if err == io.EOF {
		err = errors.New("the peer sent close_notify")
	}
	return n, err
}

// receiveAll reads until buf is full or nothing more can be decrypted now.
func (c *conn) receiveAll(buf []byte) (int, error) {
	filled := 0
	for filled < len(buf) {
		n, err := c.receive(buf[filled:])
		if err != nil {
			return filled, err
		}
		if n == 0 {
			break
		}
		filled += n
	}
	return filled, nil
}

// close sends close_notify.
func (c *conn) close() error { return c.tls.CloseWrite() }

// peerClosed reads what arrived; true once the peer's close_notify has.
func (c *conn) peerClosed() (bool, error) {
	n, err := c.tls.Read(c.one[:])
	switch {
	case n > 0:
		return false, errors.New("received application data where close_notify was expected")
	case err == io.EOF:
		return true, nil
	case err == errWouldBlock:
		return false, nil
	}
	return false, err
}
