package main

// Sessions (docs/runner-protocol.md, "Sessions"): one process takes sample after sample, each a
// request line on stdin, so that the runtime's warm state (its heap, its caches) carries over
// while every sample builds its own configs, connections and session caches. A side in a session
// meets its peer at a Unix socket path that each sample makes anew.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
)

// session answers each request line of in with one reply line on replies, until in ends. Only
// a broken stdin or reply channel ends it early: a failed or unsupported reply never does.
func session(in io.Reader, replies io.Writer) error {
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadString('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading a request: %w", err)
		}
		if line == "" && err == io.EOF {
			return nil
		}
		words := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		var reply any
		switch words[0] {
		case "sample", "side":
			// Flags are parsed into a new flag set per request (newFlags), so nothing of one
			// request's carries into the next.
			reply = run(words, replies, true)
		default:
			reply = Reply{Status: "failed", Reason: fmt.Sprintf("a session takes sample and side requests (got `%s`)", words[0])}
		}
		out, encodeErr := jsonLine(reply)
		if encodeErr != nil {
			out, _ = jsonLine(Reply{Status: "failed", Reason: fmt.Sprintf("encoding the reply: %v", encodeErr)})
		}
		// One write of the whole line: the reply channel is an unbuffered *os.File, so the
		// line is out (flushed) once Write returns.
		if _, err := replies.Write(out); err != nil {
			return fmt.Errorf("writing a reply: %w", err)
		}
		if err == io.EOF {
			return nil
		}
	}
}

// peerWait is how long a side waits for its peer at --peer-socket (a variable so that a test
// need not wait the protocol's 30 s).
var peerWait = 30 * time.Second

// peerAt is the socket to the peer at path: the server listens there, the client connects.
// Either way it is a blocking descriptor in an *os.File, as --peer-fd's is, so that the relay
// reads and writes it with plain blocking system calls, not through Go's netpoller.
func peerAt(role Side, path string) (*os.File, error) {
	if role == Server {
		return acceptPeer(path)
	}
	return connectPeer(path)
}

func unixSocket() (int, error) {
	return syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
}

// acceptPeer listens at path (in place of a stale file left there), takes one connection
// within peerWait, and removes path again.
func acceptPeer(path string) (*os.File, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("removing the stale %s: %w", path, err)
	}
	listener, err := unixSocket()
	if err != nil {
		return nil, fmt.Errorf("listening for the peer at %s: %w", path, err)
	}
	defer syscall.Close(listener)
	if err := syscall.Bind(listener, &syscall.SockaddrUnix{Name: path}); err != nil {
		return nil, fmt.Errorf("listening for the peer at %s: %w", path, err)
	}
	defer os.Remove(path)
	if err := syscall.Listen(listener, 1); err != nil {
		return nil, fmt.Errorf("listening for the peer at %s: %w", path, err)
	}
	// Wait in ppoll, which takes a time-out, then accept the connection that is waiting.
	deadline, polls := time.Now().Add(peerWait), uint64(0)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("no peer connected to %s within %g s", path, peerWait.Seconds())
		}
		fds := [1]pollFd{{fd: int32(listener), events: pollIn}}
		n, err := poll(fds[:], left, &polls)
		if err != nil {
			return nil, fmt.Errorf("waiting for the peer at %s: %w", path, err)
		}
		if n > 0 {
			break
		}
	}
	for {
		fd, _, err := syscall.Accept4(listener, syscall.SOCK_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("accepting the peer at %s: %w", path, err)
		}
		return os.NewFile(uintptr(fd), "peer"), nil
	}
}

// connectPeer connects to path, trying again every millisecond for peerWait while the peer's
// socket is not there yet (ENOENT) or not listening yet (ECONNREFUSED, as a stale file does).
func connectPeer(path string) (*os.File, error) {
	deadline := time.Now().Add(peerWait)
	for {
		fd, err := unixSocket()
		if err == nil {
			if err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err == nil {
				return os.NewFile(uintptr(fd), "peer"), nil
			}
			syscall.Close(fd)
		}
		again := err == syscall.ENOENT || err == syscall.ECONNREFUSED || err == syscall.EINTR
		if !again || !time.Now().Before(deadline) {
			return nil, fmt.Errorf("cannot connect to the peer at %s: %v", path, err)
		}
		time.Sleep(time.Millisecond)
	}
}
