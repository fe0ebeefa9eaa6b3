/*
 * cpu_v3.c — the CPU stages (../cpu.c) compiled for x86-64-v3 (AVX2);
 * CMake adds -march=x86-64-v3. ../cpu.c picks the variant at run time.
 */
#define TALUS_CPU_ISA v3
#include "kernels/cpu/cpu.c"
