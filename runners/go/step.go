package main

// How the two sides take turns (crates/harness/src/step.rs): the client first, then the
// server, round after round; a side is given a turn only when its peer's bytes wait to be
// read (or, for the client, to begin). In one process and split across two, the same loop.

import "fmt"

// maxHandshakeSteps: a handshake that needs more turns per side is stuck, not slow.
const maxHandshakeSteps = 64

type turns interface {
	// turn gives side its turn; true once its handshake has completed.
	turn(side Side) (bool, error)
	// unread is the bytes written by either side and not yet read.
	unread() int
}

// completeHandshakes turns the sides until both have completed and read everything the other
// sent (session tickets arrive after the handshake).
func completeHandshakes(t turns) error {
	roundsSinceDone := 0
	for range maxHandshakeSteps {
		clientDone, err := t.turn(Client)
		if err != nil {
			return err
		}
		serverDone, err := t.turn(Server)
		if err != nil {
			return err
		}
		if clientDone && serverDone {
			switch n := t.unread(); {
			case n == 0:
				return nil
			case roundsSinceDone == 2:
				// Bytes nobody reads would be work left out of the measurement.
				return gateFailed("both sides completed the handshake, and %d bytes stay unread", n)
			default:
				roundsSinceDone++
			}
		}
	}
	return fmt.Errorf("the handshake did not complete in %d turns per side (%d bytes unread)",
		maxHandshakeSteps, t.unread())
}

// progress is where one connection pair stands.
type progress struct {
	clientStarted bool
	done          [2]bool
}

// turnOne gives one side's connection its turn if it has something to do.
func turnOne(c *conn, side Side, l *link, p *progress, m *meter) (bool, error) {
	started := side == Server || p.clientStarted // the server's first turn comes with the client's hello
	if side == Client {
		p.clientStarted = true
	}
	if !started || l.unreadBy(side) > 0 {
		var done bool
		var err error
		m.call(side, func() { done, err = c.handshake() })
		if err != nil {
			return false, failed(side, "handshake", err)
		}
		p.done[side] = done
	}
	return p.done[side], nil
}

// inProcess is a client and a server connection on one link.
type inProcess struct {
	conns [2]*conn
	link  *link
	p     progress
	meter *meter
}

func (t *inProcess) turn(side Side) (bool, error) {
	return turnOne(t.conns[side], side, t.link, &t.p, t.meter)
}

func (t *inProcess) unread() int { return t.link.inFlight() }
