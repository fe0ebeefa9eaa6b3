/*
 * cpu_v4.c — the CPU stages (../cpu.c) compiled for x86-64-v4 (AVX-512);
 * CMake adds -march=x86-64-v4. ../cpu.c picks the variant at run time.
 */
#define TALUS_CPU_ISA v4
#include "kernels/cpu/cpu.c"
