package main

// The JSON replies of runner protocol v2 (crates/harness/src/protocol.rs), and the three ways a
// measurement ends without numbers: unsupported, failed, or a gate that caught a difference.

import (
	"encoding/json"
	"errors"
	"fmt"
)

const protocolVersion = 4

type Side int

const (
	Client Side = iota
	Server
)

func (s Side) String() string {
	if s == Client {
		return "client"
	}
	return "server"
}

func (s Side) peer() Side { return 1 - s }

func (s Side) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

type ListReply struct {
	ProtocolVersion int         `json:"protocol_version"`
	Stacks          []StackInfo `json:"stacks"`
	// FullSpeed: sample takes --full-speed (speed.go), where the probe is the harness's (amd64).
	FullSpeed bool `json:"full_speed,omitempty"`
}

type StackInfo struct {
	ID           string       `json:"id"`
	Library      string       `json:"library"`
	TLSLibrary   string       `json:"tls_library"`
	Backend      Backend      `json:"backend"`
	Capabilities Capabilities `json:"capabilities"`
}

// Backend is the crypto library under the stack (crates/harness/src/stack.rs, Backend).
type Backend struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Detail  string `json:"detail,omitempty"`
}

// Reply is a sample's outcome: {"status":"ok", ...report} or {"status":..., "reason":...}; a
// failed one whose failure only echoes the peer runner's also says "cause": "peer".
type Reply struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Cause  string `json:"cause,omitempty"`
	*SampleReport
}

type SampleReport struct {
	ClientLibrary string          `json:"client_library"`
	ServerLibrary string          `json:"server_library"`
	Iterations    uint64          `json:"iterations"`
	Values        []MetricValue   `json:"values"`
	Negotiated    []SideNegotiate `json:"negotiated,omitempty"`
	// The time measure only: gc_collections, gc_ms and measured_ms (gc.go).
	*GCReport
	// With --full-speed: what the judged loop did (speed.go).
	CPUSpeed *CPUSpeed `json:"cpu_speed,omitempty"`
}

type MetricValue struct {
	Side    Side    `json:"side"`
	Metric  string  `json:"metric"`
	Value   float64 `json:"value"`
	Seconds float64 `json:"seconds"`
}

type SideNegotiate struct {
	Side       Side   `json:"side"`
	Negotiated string `json:"negotiated"`
}

// TraceReply is `trace`'s outcome: the trace's fields beside "status", or the reason.
type TraceReply struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	*IoTrace
}

// errUnsupported marks what this stack cannot do: reported as unsupported, never as failed.
type errUnsupported struct{ reason string }

func (e errUnsupported) Error() string { return e.reason }

func unsupported(format string, args ...any) error {
	return errUnsupported{fmt.Sprintf(format, args...)}
}

// failed is a library call that failed, named by side and stage as the harness names it.
func failed(side Side, stage string, err error) error {
	return fmt.Errorf("%s %s failed: %w", side, stage, err)
}

func gateFailed(format string, args ...any) error {
	return fmt.Errorf("gate failed: "+format, args...)
}

// errPeer is a failure that only echoes the peer runner's (Error::Peer in the harness): it
// stopped, and its abort says why, or it went away. The reply says so ("cause": "peer"), and the
// orchestrator reports the peer's own reason rather than this one.
type errPeer struct{ err error }

func (e errPeer) Error() string { return e.err.Error() }
func (e errPeer) Unwrap() error { return e.err }

func peerFailed(format string, args ...any) error {
	return errPeer{fmt.Errorf(format, args...)}
}

// replyOf turns a measurement's outcome into its reply.
func replyOf(report *SampleReport, err error) Reply {
	var unsup errUnsupported
	var peer errPeer
	switch {
	case err == nil:
		return Reply{Status: "ok", SampleReport: report}
	case errors.As(err, &unsup):
		return Reply{Status: "unsupported", Reason: unsup.reason}
	case errors.As(err, &peer):
		return Reply{Status: "failed", Reason: err.Error(), Cause: "peer"}
	default:
		return Reply{Status: "failed", Reason: err.Error()}
	}
}
