// The thread count and the last error message (one per calling thread).
#include "common.hpp"

namespace pq {

int& thread_count() {
    static int count = 1;
    return count;
}

namespace {
thread_local std::string last_error;
}

int set_error(const char* format, ...) {
    char buffer[512];
    va_list args;
    va_start(args, format);
    vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    last_error = buffer;
    return 1;
}

}  // namespace pq

PQ_API void pq_set_threads(int threads) { pq::thread_count() = threads < 1 ? 1 : threads; }

PQ_API int pq_threads() { return pq::thread_count(); }

PQ_API const char* pq_last_error() { return pq::last_error.c_str(); }
