#include "server/pool/pool_status.hpp"

#include <nlohmann/json.hpp>

#include "server/pool/nvml_utilization.hpp"

namespace rgpu::server {

std::string pool_status_json(Backend& backend, const std::vector<int>& gpus, const PoolPolicy& policy) {
  LedgerSnapshot ledger = policy.ledger ? policy.ledger->snapshot() : LedgerSnapshot{};
  nlohmann::json out;
  out["backend"] = backend.name();
  out["port"] = policy.port;
  out["credentials"] = !policy.job_key.empty();
  out["gpus"] = nlohmann::json::array();
  for (int g : gpus) {
    nlohmann::json gpu;
    gpu["gpu"] = g;
    gpu["mode"] = g < static_cast<int>(policy.modes.size()) && policy.modes[g] == GpuMode::exclusive ? "exclusive"
                                                                                                     : "shared";
    cudaDeviceProp prop;
    const bool known = backend.get_device_properties(&prop, g) == cudaSuccess;
    if (known) gpu["name"] = prop.name;
    size_t free = 0, total = 0;
    if (backend.set_device(g) == cudaSuccess && backend.mem_get_info(&free, &total) == cudaSuccess) {
      gpu["memory_total"] = total;
      gpu["memory_free"] = free;
    }
    // Only a real GPU has utilisation (the test backend's bus ids are made up).
    int percent = 0;
    bool measured = known && backend.name() == "cuda" && nvml_utilization(pci_bus_id(prop).c_str(), &percent);
    gpu["utilization"] = measured ? nlohmann::json(percent) : nlohmann::json(nullptr);
    nlohmann::json jobs = nlohmann::json::object();
    for (const auto& j : ledger.job_gpus) {
      if (j.gpu != g) continue;
      jobs[j.job] = {{"amount", j.amount}, {"used", j.used}, {"share", j.share}, {"sessions", nlohmann::json::array()}};
    }
    nlohmann::json loose = nlohmann::json::array();
    for (const auto& s : ledger.sessions) {
      if (std::find(s.gpus.begin(), s.gpus.end(), g) == s.gpus.end()) continue;
      nlohmann::json session = {{"host", s.host}, {"process", s.process}, {"pid", s.client_pid}, {"worker", s.worker}};
      if (!s.move.empty()) session["move"] = s.move;
      if (s.job.empty()) {
        loose.push_back(session);
        continue;
      }
      if (!jobs.contains(s.job))
        jobs[s.job] = {{"amount", 0}, {"used", 0}, {"share", 0}, {"sessions", nlohmann::json::array()}};
      jobs[s.job]["sessions"].push_back(session);
    }
    gpu["jobs"] = jobs;
    gpu["sessions_without_job"] = loose;
    out["gpus"].push_back(gpu);
  }
  return out.dump();
}

}  // namespace rgpu::server
