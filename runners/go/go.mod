// The Go runner of tlsbench: crypto/tls measured with the runner protocol that the Rust
// runners speak (crates/harness). Standard library only.
//
// go 1.25: ConnectionState.CurveID (the negotiated group) is new in Go 1.25, and X25519MLKEM768
// in 1.24. The go line also sets the GODEBUG defaults of the build: those of Go 1.25 (see
// README.md in this directory).
module tlsbench/runners/go

go 1.25
