// `rgpu job-end`: the scheduler side ends a job on its servers.
#pragma once

namespace rgpu::cli {
int job_end_command(int argc, char** argv);
}
