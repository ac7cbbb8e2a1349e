// The probe's workload (speed.go) in the instructions that rustc gives the harness's
// (crates/harness/src/speed.rs, `stretch`), so that both time the CPU in the same units: rounds
// per microsecond of eight independent 64-by-64-bit multiply chains. Go's compiler spills these
// chains to the stack (the multiply's fixed registers), which ran the workload at 0.3 to 0.4 of
// the harness's speed; written out, the two reached the same speeds on one CPU (the 90th
// percentile of 4,000 probes each: 248.5 and 248.5, 247.6 and 240.4 rounds per µs; 2026-11-30).

#include "textflag.h"

// func stretchRounds(rounds uint64)
TEXT ·stretchRounds(SB), NOSPLIT, $0-8
	MOVQ rounds+0(FP), BX
	MOVQ $0x9e3779b97f4a7c15, R12
	MOVQ $1, CX
	MOVQ $2, SI
	MOVQ $3, DI
	MOVQ $4, R8
	MOVQ $5, R9
	MOVQ $6, R10
	MOVQ $7, R11
	MOVQ $8, R13
	TESTQ BX, BX
	JZ done

loop:
	// Each chain: chain = low ^ high of chain * K + the next chain, in 128 bits.
	MOVQ CX, AX
	MULQ R12
	ADDQ SI, AX
	ADCQ $0, DX
	XORQ AX, DX
	MOVQ DX, CX
	MOVQ SI, AX
	MULQ R12
	ADDQ DI, AX
	ADCQ $0, DX
	XORQ AX, DX
	MOVQ DX, SI
	MOVQ DI, AX
	MULQ R12
	ADDQ R8, AX
	ADCQ $0, DX
	XORQ AX, DX
	MOVQ DX, DI
	MOVQ R8, AX
	MULQ R12
	ADDQ R9, AX
	ADCQ $0, DX
	XORQ AX, DX
	MOVQ DX, R8
	MOVQ R9, AX
	MULQ R12
	ADDQ R10, AX
	ADCQ $0, DX
	XORQ AX, DX
	MOVQ DX, R9
	MOVQ R10, AX
	MULQ R12
	ADDQ R11, AX
	ADCQ $0, DX
	XORQ AX, DX
	MOVQ DX, R10
	MOVQ R11, AX
	MULQ R12
	ADDQ R13, AX
	ADCQ $0, DX
	XORQ AX, DX
	MOVQ DX, R11
	MOVQ R13, AX
	MULQ R12
	ADDQ CX, AX
	ADCQ $0, DX
	XORQ AX, DX
	MOVQ DX, R13
	DECQ BX
	JNZ loop

done:
	RET
