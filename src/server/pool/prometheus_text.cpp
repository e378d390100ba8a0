#include "server/pool/prometheus_text.hpp"

#include <map>
#include <sstream>

#include "protocol/op_names.hpp"
#include "server/pool/nvml_utilization.hpp"

namespace rgpu::server {
namespace {

void header(std::ostringstream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

}  // namespace

std::string prometheus_text(JobLedger& ledger, const ServerCounters& counters) {
  std::ostringstream out;
  LedgerSnapshot snap = ledger.snapshot();

  header(out, "rgpu_sessions", "gauge", "Sessions open now, by GPU.");
  std::map<int, int> per_gpu;
  for (const auto& s : snap.sessions)
    for (int g : s.gpus) ++per_gpu[g];
  for (const auto& [g, n] : per_gpu) out << "rgpu_sessions{gpu=\"" << g << "\"} " << n << '\n';
  header(out, "rgpu_gpu_sharing", "gauge",
         "How a GPU's sessions share it (mode: timeslice, mps, or timeslice-fallback when its MPS daemon could not "
         "start), for GPUs with sessions or MPS configured.");
  for (int g = 0; g < kLedgerGpus; ++g)
    if (SharingState st = counters.gpu_sharing(g); st != SharingState::timeslice || per_gpu.count(g))
      out << "rgpu_gpu_sharing{gpu=\"" << g << "\",mode=\"" << sharing_state_name(st) << "\"} 1\n";
  const auto gpu_counter = [&](const char* name, const char* help, uint64_t (ServerCounters::*count)(int) const) {
    header(out, name, "counter", help);
    for (int g = 0; g < kLedgerGpus; ++g)
      if (uint64_t n = (counters.*count)(g)) out << name << "{gpu=\"" << g << "\"} " << n << '\n';
  };
  gpu_counter("rgpu_sticky_faults_total",
              "Sessions whose context hit a sticky fault (illegal address, device assert...), by GPU.",
              &ServerCounters::sticky_faults);
  gpu_counter("rgpu_mps_restarts_total", "Times the server restarted a GPU's failed MPS daemon, by GPU.",
              &ServerCounters::mps_restarts);
  header(out, "rgpu_sessions_opened_total", "counter", "Sessions admitted since the server started.");
  out << "rgpu_sessions_opened_total " << counters.sessions_opened() << '\n';
  header(out, "rgpu_sessions_refused_total", "counter", "Sessions refused (credential, exclusive GPU, ended job...).");
  out << "rgpu_sessions_refused_total " << counters.sessions_refused() << '\n';

  const auto summary = [&](const char* name, const char* help, ServerCounters::Durations d) {
    header(out, name, "summary", help);
    out << name << "_count " << d.count << '\n' << name << "_sum " << d.sum_s << '\n';
    const std::string most = std::string(name) + "_max";
    header(out, most.c_str(), "gauge", "The longest of them.");
    out << most << ' ' << d.max_s << '\n';
  };
  summary("rgpu_worker_start_seconds", "Worker starts, fork to ready (CUDA initialisation and context).",
          counters.worker_starts());
  summary("rgpu_client_wait_seconds", "Time accepted clients waited for a ready worker.", counters.client_waits());

  header(out, "rgpu_calls_total", "counter", "Calls served, by op.");
  std::ostringstream errors;
  for (uint16_t op = 0; op < ServerCounters::kOps; ++op) {
    uint64_t n = counters.calls(op);
    if (!n) continue;
    std::string name = op == ServerCounters::kOps - 1 ? "other" : proto::op_name(op);
    out << "rgpu_calls_total{op=\"" << name << "\"} " << n << '\n';
    if (uint64_t e = counters.errors(op)) errors << "rgpu_call_errors_total{op=\"" << name << "\"} " << e << '\n';
  }
  header(out, "rgpu_call_errors_total", "counter", "Calls that returned an error, by op.");
  out << errors.str();

  header(out, "rgpu_bytes_total", "counter", "Bytes of call payload moved, by direction and transport.");
  for (auto t : {TransportKind::tcp, TransportKind::shm})
    for (auto d : {Direction::to_server, Direction::to_client})
      out << "rgpu_bytes_total{direction=\"" << (d == Direction::to_server ? "to_server" : "to_client")
          << "\",transport=\"" << (t == TransportKind::tcp ? "tcp" : "shm") << "\"} " << counters.bytes(t, d) << '\n';

  header(out, "rgpu_job_memory_used_bytes", "gauge", "GPU memory a job's sessions hold, by job and GPU.");
  for (const auto& j : snap.job_gpus)
    out << "rgpu_job_memory_used_bytes{job=\"" << j.job << "\",gpu=\"" << j.gpu << "\"} " << j.used << '\n';
  header(out, "rgpu_job_memory_amount_bytes", "gauge", "GPU memory a job may hold (its credential's amount), by job and GPU.");
  for (const auto& j : snap.job_gpus)
    if (j.amount) out << "rgpu_job_memory_amount_bytes{job=\"" << j.job << "\",gpu=\"" << j.gpu << "\"} " << j.amount << '\n';
  header(out, "rgpu_job_compute_share_percent", "gauge",
         "Percent of a GPU's SMs each of a job's sessions may use (its credential's share; applied with MPS), by job "
         "and GPU.");
  for (const auto& j : snap.job_gpus)
    if (j.share) out << "rgpu_job_compute_share_percent{job=\"" << j.job << "\",gpu=\"" << j.gpu << "\"} " << j.share << '\n';

  header(out, "rgpu_gpu_utilization_percent", "gauge", "GPU busy time lately (NVML), by GPU.");
  for (int g = 0; g < kLedgerGpus; ++g) {
    std::string id = counters.bus_id(g);
    int percent = 0;
    if (!id.empty() && nvml_utilization(id.c_str(), &percent))
      out << "rgpu_gpu_utilization_percent{gpu=\"" << g << "\"} " << percent << '\n';
  }
  return out.str();
}

}  // namespace rgpu::server
