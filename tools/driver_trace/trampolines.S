// A pool of call trampolines for the driver tracer. Trampoline i pushes i and
// enters a common handler that logs the call (rgpu_trace_enter returns the
// function to call), calls the traced function with the caller's registers
// and a copy of its first 16 stack arguments, logs the result
// (rgpu_trace_leave) and returns it. The traced function's signature need not
// be known: this is what lets the tracer log NVIDIA's undocumented tables.
        .text
        .globl  rgpu_trace_trampolines
        .hidden rgpu_trace_trampolines
        .p2align 4
rgpu_trace_trampolines:
        .set    index, 0
        .rept   RGPU_TRACE_TRAMPOLINES
        .p2align 4
        pushq   $index
        jmp     rgpu_trace_common
        .set    index, index + 1
        .endr

        .p2align 4
        .type   rgpu_trace_common, @function
rgpu_trace_common:
        // On entry: (%rsp) = index, 8(%rsp) = return address.
        pushq   %rbp
        movq    %rsp, %rbp
        // 0x00-0x7f stack arguments, 0x80-0xb7 rdi rsi rdx rcx r8 r9 rax,
        // 0xb8 the traced function, 0xc0-0x13f xmm0-7; keeps rsp 16-aligned.
        subq    $0x148, %rsp
        movq    %rdi, 0x80(%rsp)
        movq    %rsi, 0x88(%rsp)
        movq    %rdx, 0x90(%rsp)
        movq    %rcx, 0x98(%rsp)
        movq    %r8, 0xa0(%rsp)
        movq    %r9, 0xa8(%rsp)
        movq    %rax, 0xb0(%rsp)
        movdqu  %xmm0, 0xc0(%rsp)
        movdqu  %xmm1, 0xd0(%rsp)
        movdqu  %xmm2, 0xe0(%rsp)
        movdqu  %xmm3, 0xf0(%rsp)
        movdqu  %xmm4, 0x100(%rsp)
        movdqu  %xmm5, 0x110(%rsp)
        movdqu  %xmm6, 0x120(%rsp)
        movdqu  %xmm7, 0x130(%rsp)
        movq    8(%rbp), %rdi
        leaq    0x80(%rsp), %rsi
        call    rgpu_trace_enter
        movq    %rax, 0xb8(%rsp)
        xorl    %ecx, %ecx
1:      movq    24(%rbp,%rcx,8), %rax
        movq    %rax, (%rsp,%rcx,8)
        incq    %rcx
        cmpq    $16, %rcx
        jb      1b
        movq    0x80(%rsp), %rdi
        movq    0x88(%rsp), %rsi
        movq    0x90(%rsp), %rdx
        movq    0x98(%rsp), %rcx
        movq    0xa0(%rsp), %r8
        movq    0xa8(%rsp), %r9
        movdqu  0xc0(%rsp), %xmm0
        movdqu  0xd0(%rsp), %xmm1
        movdqu  0xe0(%rsp), %xmm2
        movdqu  0xf0(%rsp), %xmm3
        movdqu  0x100(%rsp), %xmm4
        movdqu  0x110(%rsp), %xmm5
        movdqu  0x120(%rsp), %xmm6
        movdqu  0x130(%rsp), %xmm7
        movq    0xb0(%rsp), %rax
        call    *0xb8(%rsp)
        movq    %rax, 0x80(%rsp)
        movq    %rdx, 0x88(%rsp)
        movdqu  %xmm0, 0xc0(%rsp)
        movdqu  %xmm1, 0xd0(%rsp)
        movq    8(%rbp), %rdi
        movq    %rax, %rsi
        call    rgpu_trace_leave
        movq    0x80(%rsp), %rax
        movq    0x88(%rsp), %rdx
        movdqu  0xc0(%rsp), %xmm0
        movdqu  0xd0(%rsp), %xmm1
        leave
        addq    $8, %rsp
        ret
        .size   rgpu_trace_common, . - rgpu_trace_common

        .section .note.GNU-stack, "", @progbits
