package main

// The JSON replies of runner protocol v2 (crates/harness/src/protocol.rs), and the three ways a
// measurement ends without numbers: unsupported, failed, or a gate that caught a difference.

import (
	"encoding/json"
	"errors"
	"fmt"
)

const protocolVersion = 3

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

// Reply is a sample's outcome: {"status":"ok", ...report} or {"status":..., "reason":...}.
type Reply struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	*SampleReport
}

type SampleReport struct {
	ClientLibrary string          `json:"client_library"`
	ServerLibrary string          `json:"server_library"`
	Iterations    uint64          `json:"iterations"`
	Values        []MetricValue   `json:"values"`
	Negotiated    []SideNegotiate `json:"negotiated,omitempty"`
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

// replyOf turns a measurement's outcome into its reply.
func replyOf(report *SampleReport, err error) Reply {
	var unsup errUnsupported
	switch {
	case err == nil:
		return Reply{Status: "ok", SampleReport: report}
	case errors.As(err, &unsup):
		return Reply{Status: "unsupported", Reason: unsup.reason}
	default:
		return Reply{Status: "failed", Reason: err.Error()}
	}
}
