// PTX of the kernels the driver-API corpus programs load with
// cuModuleLoadData (the GPU's driver JIT-compiles it), kept as text so each
// program builds with one nvcc command. Made by `nvcc -ptx -arch=compute_90`
// from this source:
//
//   extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
//     if (i < n) c[i] = a[i] + b[i];
//   }
//   struct Affine {
//     double scale;
//     int shift;
//   };
//   extern "C" __global__ void affine(Affine p, const int* in, int* out, int n) {
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
//     if (i < n) out[i] = static_cast<int>(in[i] * p.scale) + p.shift;
//   }
//   __device__ int bias;
//   extern "C" __global__ void add_bias(int* data, int n) {
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
//     if (i < n) data[i] += bias;
//   }
#pragma once

struct Affine {
  double scale;
  int shift;
};

static const char kDriverKernelsPtx[] = R"PTX(
.version 9.0
.target sm_90
.address_size 64

	// .globl	vadd
.global .align 4 .u32 bias;

.visible .entry vadd(
	.param .u64 vadd_param_0,
	.param .u64 vadd_param_1,
	.param .u64 vadd_param_2,
	.param .u32 vadd_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<11>;


	ld.param.u64 	%rd1, [vadd_param_0];
	ld.param.u64 	%rd2, [vadd_param_1];
	ld.param.u64 	%rd3, [vadd_param_2];
	ld.param.u32 	%r2, [vadd_param_3];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd4, %rd1;
	mul.wide.s32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd4, %rd5;
	cvta.to.global.u64 	%rd7, %rd2;
	add.s64 	%rd8, %rd7, %rd5;
	ld.global.f32 	%f1, [%rd8];
	ld.global.f32 	%f2, [%rd6];
	add.f32 	%f3, %f2, %f1;
	cvta.to.global.u64 	%rd9, %rd3;
	add.s64 	%rd10, %rd9, %rd5;
	st.global.f32 	[%rd10], %f3;

$L__BB0_2:
	ret;

}
	// .globl	affine
.visible .entry affine(
	.param .align 8 .b8 affine_param_0[16],
	.param .u64 affine_param_1,
	.param .u64 affine_param_2,
	.param .u32 affine_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .b16 	%rs<9>;
	.reg .b32 	%r<10>;
	.reg .f64 	%fd<4>;
	.reg .b64 	%rd<8>;


	ld.param.u64 	%rd1, [affine_param_1];
	ld.param.u64 	%rd2, [affine_param_2];
	ld.param.u32 	%r3, [affine_param_3];
	ld.param.u32 	%r2, [affine_param_0+8];
	ld.param.f64 	%fd1, [affine_param_0];
	mov.u32 	%r4, %ctaid.x;
	mov.u32 	%r5, %ntid.x;
	mov.u32 	%r6, %tid.x;
	mad.lo.s32 	%r1, %r4, %r5, %r6;
	setp.ge.s32 	%p1, %r1, %r3;
	@%p1 bra 	$L__BB1_2;

	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.s32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.u32 	%r7, [%rd5];
	cvt.rn.f64.s32 	%fd2, %r7;
	mul.f64 	%fd3, %fd1, %fd2;
	cvt.rzi.s32.f64 	%r8, %fd3;
	add.s32 	%r9, %r8, %r2;
	cvta.to.global.u64 	%rd6, %rd2;
	add.s64 	%rd7, %rd6, %rd4;
	st.global.u32 	[%rd7], %r9;

$L__BB1_2:
	ret;

}
	// .globl	add_bias
.visible .entry add_bias(
	.param .u64 add_bias_param_0,
	.param .u32 add_bias_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<5>;


	ld.param.u64 	%rd1, [add_bias_param_0];
	ld.param.u32 	%r2, [add_bias_param_1];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.s32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB2_2;

	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.s32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r6, [%rd4];
	ld.global.u32 	%r7, [bias];
	add.s32 	%r8, %r6, %r7;
	st.global.u32 	[%rd4], %r8;

$L__BB2_2:
	ret;

}

)PTX";
