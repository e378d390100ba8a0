// PTX of a module with managed globals, written by hand for the programs
// that reach them from the host (cuModuleGetGlobal, then plain loads and
// stores): `hits` and `sum` are managed and share a page, `scratch` is
// plain device memory. accumulate(counter, amount) adds amount to *counter
// and to sum, and stores the new *counter in scratch. The driver
// JIT-compiles it for the GPU at hand.
#pragma once

static const char kManagedGlobalsPtx[] = R"PTX(
.version 8.0
.target sm_75
.address_size 64

.global .attribute(.managed) .align 4 .u32 hits = 7;
.global .attribute(.managed) .align 8 .u64 sum = 1000;
.global .align 4 .u32 scratch;

.visible .entry accumulate(
	.param .u64 accumulate_counter,
	.param .u32 accumulate_amount
)
{
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [accumulate_counter];
	ld.param.u32 	%r1, [accumulate_amount];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.u32 	%r2, [%rd2];
	add.s32 	%r3, %r2, %r1;
	st.global.u32 	[%rd2], %r3;
	ld.global.u64 	%rd3, [sum];
	cvt.u64.u32 	%rd4, %r1;
	add.s64 	%rd3, %rd3, %rd4;
	st.global.u64 	[sum], %rd3;
	st.global.u32 	[scratch], %r3;
	ret;
}
)PTX";
