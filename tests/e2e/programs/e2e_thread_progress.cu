// One application thread's long blocking call must not hold up another
// thread's calls: while thread A waits for a large device-to-host copy,
// thread B's small calls complete. (Were they serialised, none of B's calls
// could finish before A's.)
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "check.h"

using Clock = std::chrono::steady_clock;

int main() {
  // Large enough to take well over the time B needs, on any transport.
  const size_t big = 768u << 20;
  char* d_big = nullptr;
  OK(cudaMalloc(&d_big, big));
  OK(cudaMemset(d_big, 7, big));
  std::vector<char> h_big(big);

  std::atomic<bool> a_calling{false}, a_finished{false};
  std::atomic<int> b_while_a = 0;
  Clock::time_point a_done, b_done;
  std::thread a([&] {
    a_calling = true;
    OK(cudaMemcpy(h_big.data(), d_big, big, cudaMemcpyDeviceToHost));
    a_done = Clock::now();
    a_finished = true;
  });
  std::thread b([&] {
    while (!a_calling) std::this_thread::yield();
    // Let A's copy get under way on the server.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int* d = nullptr;
    OK(cudaMalloc(&d, sizeof(int)));
    for (int i = 0; i < 50; ++i) {
      int v = i, back = -1;
      OK(cudaMemcpy(d, &v, sizeof v, cudaMemcpyHostToDevice));
      OK(cudaMemcpy(&back, d, sizeof back, cudaMemcpyDeviceToHost));
      CHECK(back == i);
      if (!a_finished) ++b_while_a;
    }
    OK(cudaFree(d));
    b_done = Clock::now();
  });
  a.join();
  b.join();
  CHECK(h_big[0] == 7 && h_big[big - 1] == 7);
  CHECK(b_while_a >= 3);
  std::printf("B made %d of its 50 round trips while A's copy ran (B done %.1f ms before A)\n", b_while_a.load(),
              std::chrono::duration<double, std::milli>(a_done - b_done).count());
  OK(cudaFree(d_big));
  return finish();
}
