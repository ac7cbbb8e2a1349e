package main

// The stack `go`: crypto/tls configured from a scenario, what it can do, and what a completed
// handshake negotiated, in tlsbench's vocabulary (crates/harness/src/stack.rs).

import (
	"crypto/ed25519"
	"crypto/fips140"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
)

// serverName is the host name in every server certificate; clients verify it.
const serverName = "server.tlsbench.test"

// release and goroot are set by scripts/build-go.sh (-ldflags -X) in a runner of the stack at
// another Go release (docs/versions.md): release is the RELEASE of the stack `go@RELEASE` it
// lists and answers to (1.27 for a toolchain of Go 1.27.x; a label such as 1.26.8 or
// 1.27-devel+abcdef1234 for a local Go tree), and goroot, for a local tree, the GOROOT it was
// built with. Both empty: the default runner, of the stack `go`.
var release, goroot string

// stackID is the stack this runner holds: `go`, or `go@RELEASE`.
var stackID = idAt(release)

func idAt(release string) string {
	if release == "" {
		return "go"
	}
	return "go@" + release
}

func library() string { return libraryOf(runtime.Version(), release, goroot) }

// libraryOf is the library string: `Go crypto/tls go1.26.8` (runtime.Version()), whichever
// toolchain built it; from a local Go tree, the tree's label and path, and runtime.Version()
// where it says something else (a git checkout's commit, a devel build's date):
// `Go crypto/tls go1.27-devel+abcdef1234 (/src/go, devel go1.27-abcdef1234 Mon Jan 5 ...)`.
// tlsbench finds the release in the word goRELEASE or goRELEASE.* (stacks::owns).
func libraryOf(version, release, goroot string) string {
	if goroot == "" {
		return "Go crypto/tls " + version
	}
	library := "Go crypto/tls go" + release + " (" + goroot
	if version != "go"+release {
		library += ", " + version
	}
	return library + ")"
}

// tlsLibrary is the TLS library without its backend: the same string, crypto/tls and Go's crypto
// come with the toolchain.
func tlsLibrary() string { return library() }

// backend is the crypto crypto/tls runs on: Go's own packages, with whether they run in FIPS 140-3
// mode (GODEBUG=fips140=on) and the frozen module the build chose (GOFIPS140), if any.
func backend() Backend {
	mode := "FIPS 140-3 mode off"
	if fips140.Enabled() {
		mode = "FIPS 140-3 mode on"
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, setting := range info.Settings {
			if setting.Key == "GOFIPS140" && setting.Value != "off" {
				mode += ", module " + setting.Value
			}
		}
	}
	return Backend{Name: "Go crypto", Version: runtime.Version(), Detail: mode}
}

type Capabilities struct {
	Kinds         []Kind         `json:"kinds"`
	Versions      []Version      `json:"versions"`
	Groups        []Group        `json:"groups"`
	Keys          []KeyType      `json:"keys"`
	Suites        []Suite        `json:"suites"`
	ClientAuth    []ClientAuth   `json:"client_auth"`
	EMSOff        bool           `json:"ems_off"`
	Exclusions    []Exclusion    `json:"exclusions"`
	PeerLimits    []PeerLimit    `json:"peer_limits"`
	MeasureLimits []MeasureLimit `json:"measure_limits,omitempty"`
	MinWarmupMs   uint64         `json:"min_warmup_ms,omitempty"`
}

// Exclusion: scenarios whose names match Pattern (`*` stands for any text) are unsupported.
type Exclusion struct {
	Pattern string `json:"pattern"`
	Reason  string `json:"reason"`
}

// PeerLimit: on Side, the stack completes handshakes only with the peer stacks in Only, because
// of Reason. The Go stack declares none.
type PeerLimit struct {
	Side   Side     `json:"side"`
	Only   []string `json:"only"`
	Reason string   `json:"reason"`
}

type MeasureLimit struct {
	Measure Measure `json:"measure"`
	Reason  string  `json:"reason"`
}

// capabilities are the stack's. TLS 1.3's suite is the one Go negotiates with itself on this
// machine (see tls13Suite); the others are excluded with the reason.
func capabilities() Capabilities {
	c := Capabilities{
		Kinds: []Kind{
			HandshakeFull, HandshakeResumeTicket, Transfer, IoProfile, Memory100, Memory1000, Memory10000,
			ContextServer, ContextClient, ContextClientSystem,
		},
		Versions:   allVersions,
		Groups:     allGroups,
		Keys:       allKeys,
		Suites:     allSuites,
		ClientAuth: allAuths,
		PeerLimits: []PeerLimit{},
		Exclusions: []Exclusion{
			{"handshake-resume-id_*", "go: crypto/tls has no session-ID resumption: " +
				"its server keeps no session cache, and its client resumes from tickets only"},
			{"*_no-ems", "go: crypto/tls always uses the extended master secret in TLS 1.2; it cannot be switched off"},
			// Go's client orders groups itself (P-256 before P-384; CurvePreferences' order is
			// ignored since Go 1.24) and must list P-256 for the server's P-256 certificate.
			{"*_1.2_secp384r1_ecdsa-p256_*_mtls*",
				"go: in TLS 1.2 Go's client lists P-256 for the server's P-256 certificate, and lists it " +
					"before P-384 whatever it is told (crypto/tls orders groups itself), so a server that also " +
					"lists P-256 (to verify a P-256 client certificate) and follows the client's order negotiates P-256"},
		},
		MeasureLimits: []MeasureLimit{
			{MeasureInstructions, "go: callgrind counts between client requests that switch its collection on " +
				"and off around each library call, and a pure-Go runner cannot issue them (no C, no inline " +
				"assembly), so callgrind would count Go's runtime, garbage collector and the harness too"},
			{MeasureSync, "go: Go's locks (sync.Mutex, sync.RWMutex, the runtime's own) and its atomics are " +
				"Go code, not calls into a C library, and callgrind cannot be switched on around the library's " +
				"calls in a pure-Go runner (no client requests without C or inline assembly)"},
		},
		// A fresh process's handshakes run 10-15% slower for their first 20 to 30 ms, while
		// Go's heap and its allocator's caches grow, and are steady from about 40 ms (measured
		// here, full and resumed, TLS 1.2 and 1.3).
		MinWarmupMs: 50,
	}
	chosen, err := tls13Suite()
	for _, suite := range allSuites {
		switch {
		case err != nil:
			c.Exclusions = append(c.Exclusions, Exclusion{"*_1.3_*_" + string(suite) + "*",
				"go: finding the TLS 1.3 suite Go negotiates with itself: " + err.Error()})
		case suite != chosen:
			c.Exclusions = append(c.Exclusions, Exclusion{"*_1.3_*_" + string(suite) + "*", fmt.Sprintf(
				"go: crypto/tls has no setting for TLS 1.3 suites (Config.CipherSuites is TLS 1.2's): "+
					"its client offers all three and its server takes its own preference, so Go with itself "+
					"negotiates %s here, and no other TLS 1.3 suite can be pinned", chosen)})
		}
	}
	return c
}

// check says why the stack cannot do the scenario: the first exclusion it matches, else the
// first parameter it lacks.
func (c Capabilities) check(s Scenario) error {
	for _, e := range c.Exclusions {
		if wildcardMatch(e.Pattern, s.Name()) {
			return unsupported("%s", e.Reason)
		}
	}
	lacks := func(ok bool, what string, want any) error {
		if ok {
			return nil
		}
		return unsupported("%s: %s %s not supported", stackID, what, want)
	}
	errs := []error{
		lacks(slices.Contains(c.Kinds, s.Kind), "scenario kind", s.Kind),
		lacks(slices.Contains(c.Versions, s.Version), "TLS", s.Version),
		lacks(!s.Pinned || slices.Contains(c.Groups, s.Group), "group", s.Group),
		lacks(slices.Contains(c.Keys, s.Key), "key type", s.Key),
		lacks(!s.Pinned || slices.Contains(c.Suites, s.Suite), "cipher suite", s.Suite),
		lacks(slices.Contains(c.ClientAuth, s.ClientAuth), "client auth", s.ClientAuth),
	}
	if !s.EMS && !c.EMSOff {
		errs = append(errs, unsupported("%s: extended master secret cannot be switched off", stackID))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (c Capabilities) checkMeasure(m Measure) error {
	for _, limit := range c.MeasureLimits {
		if limit.Measure == m {
			return unsupported("%s", limit.Reason)
		}
	}
	return nil
}

// checkPeer says why the stack, on side, cannot complete a handshake with the peer stack
// peer, if it cannot (its PeerLimits), as the harness's Capabilities::check_peer: a peer at
// another release (`openssl@3.5`, `go@1.27`) is its stack.
func (c Capabilities) checkPeer(side Side, peer string) error {
	peer = stackOf(peer)
	for _, limit := range c.PeerLimits {
		if limit.Side == side && !slices.Contains(limit.Only, peer) {
			return unsupported("%s", limit.Reason)
		}
	}
	return nil
}

// stackOf is the stack of a stack id: ID of ID@RELEASE, else the id itself.
func stackOf(id string) string {
	stack, _, _ := strings.Cut(id, "@")
	return stack
}

// wildcardMatch says whether text matches pattern, in which `*` stands for any text.
func wildcardMatch(pattern, text string) bool {
	head, rest, found := strings.Cut(pattern, "*")
	if !found {
		return pattern == text
	}
	if !strings.HasPrefix(text, head) {
		return false
	}
	tail := text[len(head):]
	for i := 0; i <= len(tail); i++ {
		if wildcardMatch(rest, tail[i:]) {
			return true
		}
	}
	return false
}

// tls13Suite is the TLS 1.3 suite Go negotiates with itself here, found by doing it: its
// client lists AES-GCM first and its server prefers AES-128-GCM where the CPU has AES-GCM
// instructions, and ChaCha20-Poly1305 otherwise (crypto/tls's hasAESGCMHardwareSupport).
var tls13Suite = sync.OnceValues(func() (Suite, error) {
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"probe"},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, public, private)
	if err != nil {
		return "", err
	}
	near, far := net.Pipe()
	defer near.Close()
	defer far.Close()
	certificate := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: private}
	server := tls.Server(far, &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{certificate}})
	go server.Handshake()
	client := tls.Client(near, &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true})
	if err := client.Handshake(); err != nil {
		return "", err
	}
	return suiteOf(client.ConnectionState().CipherSuite)
})

// sideConfig is one side's tls.Config, with what its connections share.
type sideConfig struct {
	side Side
	tls  *tls.Config
	// The client's session store when the scenario resumes from tickets; nil otherwise.
	cache *ticketCache
	hs    *handshaker
}

// close ends the config's handshake coroutine. A session builds configs for every sample, and a
// coroutine left parked keeps its goroutine, its stack and its last connection alive: a warm
// process's collector then scanned more with every sample, and its TLS 1.2 ticket resumptions
// fell from 81k to 55k handshakes/s over 40 samples of 200 ms.
func (c *sideConfig) close() { c.hs.stop() }

// newConfig pins the scenario: exactly its version, group and (TLS 1.2) suite, certificates
// verified for real, and resumption on only in the way the scenario resumes. With the
// libraries' defaults only the version, the key and client auth are the scenario's, and the
// client keeps no sessions.
func newConfig(side Side, s Scenario, cr *credentials) *sideConfig {
	t, cache := tlsConfig(side, s, cr)
	return &sideConfig{side: side, tls: t, cache: cache, hs: newHandshaker()}
}

// tlsConfig is newConfig's crypto/tls part, what a context scenario builds (context.go): the
// config, and the client's session store where the scenario resumes from tickets.
func tlsConfig(side Side, s Scenario, cr *credentials) (*tls.Config, *ticketCache) {
	v := map[Version]uint16{TLS12: tls.VersionTLS12, TLS13: tls.VersionTLS13}[s.Version]
	t := &tls.Config{MinVersion: v, MaxVersion: v}
	if side == Client {
		t.RootCAs, t.ServerName = cr.roots, serverName
		if s.ClientAuth == AuthRequired {
			t.Certificates = []tls.Certificate{cr.client}
		}
	} else {
		t.Certificates = []tls.Certificate{cr.server}
		switch s.ClientAuth {
		case AuthRequired:
			t.ClientAuth, t.ClientCAs = tls.RequireAndVerifyClientCert, cr.roots
		case AuthRequested:
			t.ClientAuth, t.ClientCAs = tls.VerifyClientCertIfGiven, cr.roots
		}
	}
	if !s.Pinned {
		return t, nil
	}
	// Go orders the groups itself (CurvePreferences' order is ignored since Go 1.24) and, in
	// TLS 1.2, never checks a client certificate's curve against its list: a Go server lists
	// the scenario's group alone, so that its own order cannot pick the certificate's curve.
	groups := s.groups(side)
	if side == Server {
		groups = groups[:1]
	}
	for _, g := range groups {
		t.CurvePreferences = append(t.CurvePreferences, curveIDs[g])
	}
	// TLS 1.2 only: crypto/tls has no setting for TLS 1.3 suites (see capabilities).
	t.CipherSuites = []uint16{tls12SuiteID(s.Suite, s.Key)}
	// Each 16 KiB write is one record from the first, as with every other stack.
	t.DynamicRecordSizingDisabled = true
	t.SessionTicketsDisabled = s.Kind != HandshakeResumeTicket
	var cache *ticketCache
	if side == Client && s.Kind == HandshakeResumeTicket {
		cache = &ticketCache{}
		t.ClientSessionCache = cache
	}
	return t, cache
}

// ticketCache is a client's session store: the last session it was given. It counts them,
// so that a connection can say whether a ticket arrived.
type ticketCache struct {
	session *tls.ClientSessionState
	puts    int
}

func (c *ticketCache) Get(string) (*tls.ClientSessionState, bool) { return c.session, c.session != nil }

func (c *ticketCache) Put(_ string, cs *tls.ClientSessionState) {
	c.session = cs
	if cs != nil {
		c.puts++
	}
}

var curveIDs = map[Group]tls.CurveID{
	X25519: tls.X25519, Secp256r1: tls.CurveP256, Secp384r1: tls.CurveP384, X25519MLKEM768: tls.X25519MLKEM768,
}

// tls12SuiteID is ECDHE with the key's signature algorithm (RSA, or ECDSA for ECDSA and
// Ed25519 keys) and the suite's cipher.
func tls12SuiteID(suite Suite, key KeyType) uint16 {
	if key.isRSA() {
		return map[Suite]uint16{
			AES128GCM:        tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			AES256GCM:        tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			ChaCha20Poly1305: tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		}[suite]
	}
	return map[Suite]uint16{
		AES128GCM:        tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		AES256GCM:        tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		ChaCha20Poly1305: tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	}[suite]
}

// suiteOf names a negotiated suite by its cipher.
func suiteOf(id uint16) (Suite, error) {
	switch id {
	case tls.TLS_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:
		return AES128GCM, nil
	case tls.TLS_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:
		return AES256GCM, nil
	case tls.TLS_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:
		return ChaCha20Poly1305, nil
	}
	return "", fmt.Errorf("negotiated an unexpected cipher suite: %s", tls.CipherSuiteName(id))
}

// negotiated is what a completed handshake settled on, as one side sees it. An empty group,
// and nil pointers, are what the side cannot tell.
type negotiated struct {
	version            Version
	suite              Suite
	group              Group
	resumed            bool
	ems                *bool
	clientCertVerified *bool
	ticketReceived     *bool
}

// String is what a cell shows, as the harness writes it: `1.3 aes-128-gcm x25519, resumed`.
func (n negotiated) String() string {
	s := fmt.Sprintf("%s %s ", n.version, n.suite)
	if n.group == "" {
		s += "group not reported"
	} else {
		s += string(n.group)
	}
	if n.resumed {
		s += ", resumed"
	}
	if n.ems != nil && !*n.ems {
		s += ", no EMS"
	}
	if n.ticketReceived != nil {
		s += map[bool]string{true: ", ticket received", false: ", no ticket"}[*n.ticketReceived]
	}
	return s
}

func (c *conn) negotiated() (negotiated, error) {
	st := c.tls.ConnectionState()
	var n negotiated
	if !st.HandshakeComplete {
		return n, errors.New("the handshake is not complete")
	}
	switch st.Version {
	case tls.VersionTLS12:
		n.version = TLS12
	case tls.VersionTLS13:
		n.version = TLS13
	default:
		return n, fmt.Errorf("negotiated an unexpected version: %s", tls.VersionName(st.Version))
	}
	var err error
	if n.suite, err = suiteOf(st.CipherSuite); err != nil {
		return n, err
	}
	// No group in a resumed TLS 1.2 handshake, which has no key exchange (CurveID 0).
	if st.CurveID != 0 {
		for g, id := range curveIDs {
			if id == st.CurveID {
				n.group = g
			}
		}
		if n.group == "" {
			return n, fmt.Errorf("negotiated an unexpected group: %s", st.CurveID)
		}
	}
	n.resumed = st.DidResume
	// crypto/tls exports keying material in TLS 1.2 only with the extended master secret (RFC
	// 7627), unless GODEBUG tlsunsafeekm=1 lifts that rule: then it does not tell.
	if n.version == TLS12 && godebug("tlsunsafeekm") != "1" {
		_, err := st.ExportKeyingMaterial("tlsbench ems", nil, 1)
		ems := err == nil
		n.ems = &ems
	}
	if c.side == Server {
		verified := len(st.VerifiedChains) > 0
		n.clientCertVerified = &verified
	} else if c.cfg.cache != nil {
		received := c.cfg.cache.puts > c.puts
		n.ticketReceived = &received
	}
	return n, nil
}

// godebug is the value of a GODEBUG setting given in the environment ("" if none).
func godebug(key string) string {
	value := ""
	for _, setting := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if k, v, ok := strings.Cut(setting, "="); ok && k == key {
			value = v
		}
	}
	return value
}
