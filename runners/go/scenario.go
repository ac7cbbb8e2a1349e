package main

// Scenarios and their canonical names (kind_version_group_key_suite[_mtls|_cert-requested]
// [_no-ems]), spelled exactly as crates/harness/src/scenario.rs spells them.

import (
	"fmt"
	"slices"
	"strings"
)

type (
	Kind       string
	Version    string
	Group      string
	KeyType    string
	Suite      string
	ClientAuth string
	Measure    string
)

const (
	HandshakeFull         Kind = "handshake-full"
	HandshakeResumeID     Kind = "handshake-resume-id"
	HandshakeResumeTicket Kind = "handshake-resume-ticket"
	Transfer              Kind = "transfer"
	IoProfile             Kind = "io-profile"
	Memory100             Kind = "memory-100"
	Memory1000            Kind = "memory-1000"
	Memory10000           Kind = "memory-10000"
	ContextServer         Kind = "context-server"
	ContextClient         Kind = "context-client"
	ContextClientSystem   Kind = "context-client-system"

	TLS12 Version = "1.2"
	TLS13 Version = "1.3"

	X25519         Group = "x25519"
	Secp256r1      Group = "secp256r1"
	Secp384r1      Group = "secp384r1"
	X25519MLKEM768 Group = "x25519mlkem768"

	RSA2048   KeyType = "rsa-2048"
	RSA3072   KeyType = "rsa-3072"
	RSA4096   KeyType = "rsa-4096"
	ECDSAP256 KeyType = "ecdsa-p256"
	ECDSAP384 KeyType = "ecdsa-p384"
	Ed25519   KeyType = "ed25519"

	AES128GCM        Suite = "aes-128-gcm"
	AES256GCM        Suite = "aes-256-gcm"
	ChaCha20Poly1305 Suite = "chacha20-poly1305"

	AuthNone      ClientAuth = "none"
	AuthRequired  ClientAuth = "mtls"
	AuthRequested ClientAuth = "cert-requested"

	MeasureTime         Measure = "time"
	MeasureInstructions Measure = "instructions"
	MeasureSync         Measure = "sync"
	MeasureIo           Measure = "io"
	MeasureHeap         Measure = "heap"
	MeasureRss          Measure = "rss"
	MeasureNet          Measure = "net"
)

var (
	allKinds = []Kind{
		HandshakeFull, HandshakeResumeID, HandshakeResumeTicket, Transfer, IoProfile, Memory100, Memory1000, Memory10000,
		ContextServer, ContextClient, ContextClientSystem,
	}
	contextKinds = []Kind{ContextServer, ContextClient, ContextClientSystem}
	allVersions  = []Version{TLS12, TLS13}
	allGroups    = []Group{X25519, Secp256r1, Secp384r1, X25519MLKEM768}
	allKeys      = []KeyType{RSA2048, RSA3072, RSA4096, ECDSAP256, ECDSAP384, Ed25519}
	allSuites    = []Suite{AES128GCM, AES256GCM, ChaCha20Poly1305}
	allAuths     = []ClientAuth{AuthNone, AuthRequired, AuthRequested}
	allMeasures  = []Measure{MeasureTime, MeasureInstructions, MeasureSync, MeasureIo, MeasureHeap, MeasureRss, MeasureNet}
)

// parseOne finds text among a parameter's values, or names the valid ones.
func parseOne[T ~string](what string, all []T, text string) (T, error) {
	names := make([]string, len(all))
	for i, v := range all {
		if string(v) == text {
			return v, nil
		}
		names[i] = string(v)
	}
	return "", fmt.Errorf("unknown %s `%s` (valid: %s)", what, text, strings.Join(names, ", "))
}

func (k Kind) isResumption() bool { return k == HandshakeResumeID || k == HandshakeResumeTicket }

// isContext: one operation is building one side's context and dropping it (context.go).
func (k Kind) isContext() bool { return slices.Contains(contextKinds, k) }

// contextSide is the side a context kind builds and measures.
func (k Kind) contextSide() Side {
	if k == ContextServer {
		return Server
	}
	return Client
}

func (k KeyType) isRSA() bool { return k == RSA2048 || k == RSA3072 || k == RSA4096 }

// ecdsaCurve is the curve of an ECDSA key, as a group ("" for other keys).
func (k KeyType) ecdsaCurve() Group {
	switch k {
	case ECDSAP256:
		return Secp256r1
	case ECDSAP384:
		return Secp384r1
	}
	return ""
}

// kinds are the scenario kinds a measure applies to.
func (m Measure) kinds() []Kind {
	handshakes := []Kind{HandshakeFull, HandshakeResumeID, HandshakeResumeTicket}
	switch m {
	case MeasureTime, MeasureInstructions:
		return append(append(handshakes, Transfer), contextKinds...)
	case MeasureSync:
		return append(handshakes, Transfer)
	case MeasureIo:
		return append(handshakes, IoProfile)
	case MeasureHeap:
		return append(append(handshakes, Memory100, Memory1000, Memory10000), contextKinds...)
	case MeasureRss:
		return append([]Kind{Memory100, Memory1000, Memory10000}, contextKinds...)
	}
	return handshakes
}

// checkMeasure is unsupported unless the measure applies to the scenario's kind.
func checkMeasure(m Measure, s Scenario) error {
	kinds := m.kinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		if k == s.Kind {
			return nil
		}
		names[i] = string(k)
	}
	return unsupported("measure %s does not apply to %s scenarios (it applies to: %s)",
		m, s.Kind, strings.Join(names, ", "))
}

// defaultName stands for both the group and the suite when each library keeps its defaults.
const defaultName = "default"

// Scenario is one workload with all its parameters. Pinned is false with the libraries'
// defaults, and Group and Suite are then empty.
type Scenario struct {
	Kind       Kind
	Version    Version
	Pinned     bool
	Group      Group
	Key        KeyType
	Suite      Suite
	ClientAuth ClientAuth
	EMS        bool
}

// Name is the canonical name.
func (s Scenario) Name() string {
	group, suite := string(s.Group), string(s.Suite)
	if !s.Pinned {
		group, suite = defaultName, defaultName
	}
	name := fmt.Sprintf("%s_%s_%s_%s_%s", s.Kind, s.Version, group, s.Key, suite)
	if s.ClientAuth != AuthNone {
		name += "_" + string(s.ClientAuth)
	}
	if !s.EMS {
		name += "_no-ems"
	}
	return name
}

func (s Scenario) String() string { return s.Name() }

// ParseScenario reads a canonical name, with the Rust harness's rules and messages.
func ParseScenario(name string) (Scenario, error) {
	parts := strings.Split(name, "_")
	if len(parts) < 5 {
		return Scenario{}, fmt.Errorf(
			"scenario `%s` is not of the form kind_version_group_key_suite[_mtls|_cert-requested][_no-ems] "+
				"(e.g. handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm, "+
				"or with `%s` as both group and suite for each library's own defaults)",
			name, defaultName)
	}
	s := Scenario{ClientAuth: AuthNone, EMS: true}
	var err error
	switch group, suite := parts[2], parts[4]; {
	case group == defaultName && suite == defaultName:
	case group == defaultName || suite == defaultName:
		return Scenario{}, fmt.Errorf(
			"scenario `%s`: group and suite are either both `%s` (each library's own defaults) or both named",
			name, defaultName)
	default:
		s.Pinned = true
		if s.Group, err = parseOne("key-exchange group", allGroups, group); err != nil {
			return Scenario{}, err
		}
		if s.Suite, err = parseOne("cipher suite", allSuites, suite); err != nil {
			return Scenario{}, err
		}
	}
	if s.Kind, err = parseOne("scenario kind", allKinds, parts[0]); err != nil {
		return Scenario{}, err
	}
	if s.Version, err = parseOne("protocol version", allVersions, parts[1]); err != nil {
		return Scenario{}, err
	}
	if s.Key, err = parseOne("key type", allKeys, parts[3]); err != nil {
		return Scenario{}, err
	}
	suffixes := parts[5:]
	for i, suffix := range suffixes {
		auth, authErr := parseOne("client auth", allAuths, suffix)
		switch {
		case suffix == "no-ems" && i == len(suffixes)-1:
			s.EMS = false
		case i == 0 && authErr == nil && auth != AuthNone:
			s.ClientAuth = auth
		default:
			return Scenario{}, fmt.Errorf(
				"scenario `%s`: unknown suffix `%s` (valid: mtls, cert-requested, no-ems)", name, suffix)
		}
	}
	return s, s.validate()
}

// validate says why the parameters do not fit together, if they do not.
func (s Scenario) validate() error {
	name := s.Name()
	switch {
	case s.Kind == HandshakeResumeID && s.Version == TLS13:
		return fmt.Errorf("%s: session-ID resumption exists in TLS 1.2 only", name)
	case s.Pinned && s.Group == X25519MLKEM768 && s.Version == TLS12:
		return fmt.Errorf("%s: x25519mlkem768 exists in TLS 1.3 only", name)
	case !s.EMS && s.Version == TLS13:
		return fmt.Errorf("%s: EMS is TLS 1.2 only", name)
	case !s.Pinned && !s.EMS:
		return fmt.Errorf("%s: no-ems switches EMS off, which no library does by default; it is pinned only", name)
	case !s.Pinned && s.Kind.isResumption():
		return fmt.Errorf("%s: resumption is measured pinned only (whether and how a client keeps and offers "+
			"sessions is the application's choice, not a library default)", name)
	}
	return nil
}

// groups are the groups a side lists, the scenario's first (as Scenario::groups in the
// harness): in TLS 1.2 the groups a peer lists also bound the curve of the other side's ECDSA
// certificate (RFC 8422; OpenSSL enforces it), so the client lists that curve too, and so does
// a server that verifies a client certificate. Nil with the libraries' defaults.
func (s Scenario) groups(side Side) []Group {
	if !s.Pinned {
		return nil
	}
	groups := []Group{s.Group}
	peerHasCert := side == Client || s.ClientAuth == AuthRequired
	if curve := s.Key.ecdsaCurve(); s.Version == TLS12 && curve != "" && curve != s.Group && peerHasCert {
		groups = append(groups, curve)
	}
	return groups
}
