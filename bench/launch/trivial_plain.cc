// The same program without libtorch: the baseline of bench_launch_trivial_torch.
int main() { return 0; }
