"""Benchmark matmul throughput the right way: warm up, synchronize, and also cross-check with CUDA
events and torch.utils.benchmark."""

import statistics
import time

import torch
import torch.utils.benchmark as benchmark


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_matmul(n: int, dtype: torch.dtype, device: torch.device, repeats: int = 20) -> float:
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):  # warm-up: cuBLAS handles, autotuning, caches
        a @ b
    sync(device)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        c = a @ b
        sync(device)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def time_with_events(n: int, repeats: int = 20) -> float:
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        a @ b
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / repeats / 1000.0


def time_with_benchmark(n: int, device: torch.device) -> float:
    a = torch.randn(n, n, device=device)
    timer = benchmark.Timer(stmt="a @ a", globals={"a": a})
    return timer.blocked_autorange(min_run_time=0.5).median


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtypes = [torch.float32] + ([torch.float16, torch.bfloat16] if device.type == "cuda" else [])
    for n in (256, 1024, 2048):
        for dtype in dtypes:
            seconds = time_matmul(n, dtype, device)
            tflops = 2 * n ** 3 / seconds / 1e12
            print(f"n={n:5d} {str(dtype):15s} {seconds * 1e3:8.3f} ms  {tflops:6.2f} TFLOP/s")
        print(f"  benchmark.Timer: {time_with_benchmark(n, device) * 1e3:.3f} ms")
        if device.type == "cuda":
            print(f"  cuda events:     {time_with_events(n) * 1e3:.3f} ms")

    x = torch.randn(4096, 4096, device=device)
    torch.cuda.synchronize() if device.type == "cuda" else None
    start = time.time()
    y = torch.relu(x @ x)
    checksum = y.sum().item()  # reading the value back waits for the kernels
    print(f"one fused step: {time.time() - start:.4f}s (checksum {checksum:.1f})")


if __name__ == "__main__":
    main()
