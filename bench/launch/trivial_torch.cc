// A program that only loads libtorch (and asks it for its CPU allocator): the price of loading it.
#include <c10/core/CPUAllocator.h>

int main() { return c10::GetCPUAllocator() != nullptr ? 0 : 1; }
