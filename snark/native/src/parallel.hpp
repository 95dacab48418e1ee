// Threads for the library's loops: a count set from Python (PROOFQ_CPU_THREADS or the
// machine's cores), contiguous ranges for even work, a shared counter for uneven work.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace pq {

int& thread_count();

// fn(begin, end) on up to thread_count() contiguous ranges of [0, n); ranges below
// `grain` items are not split off (small inputs run on the calling thread).
template <class Fn>
void parallel_for(int64_t n, int64_t grain, Fn fn) {
    int64_t parts = std::min<int64_t>(thread_count(), std::max<int64_t>(1, n / std::max<int64_t>(grain, 1)));
    if (parts <= 1) {
        if (n > 0) fn(int64_t(0), n);
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(parts - 1);
    for (int64_t p = 1; p < parts; p++) {
        pool.emplace_back([=, &fn] { fn(n * p / parts, n * (p + 1) / parts); });
    }
    fn(int64_t(0), n / parts);
    for (auto& t : pool) t.join();
}

// fn(task, worker) for every task in [0, tasks), taken in order from a shared counter by
// min(thread_count(), tasks) workers: for tasks of uneven cost.
template <class Fn>
void parallel_tasks(int64_t tasks, Fn fn) {
    int workers = (int)std::min<int64_t>(thread_count(), tasks);
    std::atomic<int64_t> next(0);
    auto run = [&](int worker) {
        for (int64_t t = next++; t < tasks; t = next++) fn(t, worker);
    };
    if (workers <= 1) {
        run(0);
        return;
    }
    std::vector<std::thread> pool;
    for (int w = 1; w < workers; w++) pool.emplace_back(run, w);
    run(0);
    for (auto& t : pool) t.join();
}

inline int workers_for(int64_t tasks) { return (int)std::max<int64_t>(1, std::min<int64_t>(thread_count(), tasks)); }

}  // namespace pq
