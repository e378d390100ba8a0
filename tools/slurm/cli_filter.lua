-- cli_filter/lua (in sbatch, srun and salloc, as the user): rCUDA's way of
-- asking for remote GPUs becomes the licenses SLURM counts them by, before
-- the job is submitted:
--   --gres=rgpu:N       N whole GPUs              -> -L rgpu:N
--   --gres=rgpu:N:SIZE  SIZE on each of N shared  -> -L rgpu_shared:N,rgpu_mem:<N * SIZE in MiB>
--   --gres=rgpu:N:SIZE:P%  and P % of each one's SMs (its compute share, applied
--                       where the server shares the GPU through MPS)
--                                                 -> ... ,rgpu_sm:<N * P>
-- (SIZE as 512M, 2G or 1024K; a bare number is MiB), added to any -L given.
-- No node has an `rgpu` GRES: a request left as one would be refused.
-- SLURM reads this file as cli_filter.lua beside slurm.conf
-- (CliFilterPlugins=cli_filter/lua) on every host jobs are submitted from.

local units = { [""] = 1, M = 1, G = 1024, T = 1024 * 1024 }

-- SIZE in MiB (K rounded up), or nil.
local function mib(size)
  local n, unit = string.match(size, "^(%d+)(%a?)$")
  if not n then return nil end
  unit = string.upper(unit)
  if unit == "K" then return math.ceil(tonumber(n) / 1024) end
  return units[unit] and tonumber(n) * units[unit]
end

-- The licenses for one "rgpu[:N[:SIZE[:P%]]]" request, or nil and why not.
local function licenses_for(fields)
  local count = tonumber(fields[2] or "1")
  if not count or count < 1 or #fields > 4 then
    return nil, "rgpu:N, rgpu:N:SIZE or rgpu:N:SIZE:P% (e.g. rgpu:4:512M:25%)"
  end
  if not fields[3] then return "rgpu:" .. count end
  local each = mib(fields[3])
  if not each or each < 1 then return nil, "SIZE as 512M, 2G or 1024K, not '" .. fields[3] .. "'" end
  local l = string.format("rgpu_shared:%d,rgpu_mem:%d", count, count * each)
  if not fields[4] then return l end
  local share = tonumber(string.match(fields[4], "^(%d+)%%$"))
  if not share or share < 1 or share > 100 then return nil, "P% as 1% to 100%, not '" .. fields[4] .. "'" end
  return l .. string.format(",rgpu_sm:%d", count * share)
end

function slurm_cli_pre_submit(options, pack_offset)
  local gres = options["gres"]
  if gres == nil then return slurm.SUCCESS end
  local kept, licenses = {}, {}
  for entry in string.gmatch(gres, "[^,]+") do
    entry = string.gsub(entry, "^gres:", "")
    local fields = {}
    for f in string.gmatch(entry, "[^:]+") do table.insert(fields, f) end
    if fields[1] == "rgpu" then
      local l, why = licenses_for(fields)
      if not l then
        slurm.log_error("--gres=%s: remote GPUs are asked for as %s", entry, why)
        return slurm.ERROR
      end
      table.insert(licenses, l)
    else
      table.insert(kept, entry)
    end
  end
  if #licenses == 0 then return slurm.SUCCESS end
  if options["licenses"] ~= nil and options["licenses"] ~= "" then table.insert(licenses, 1, options["licenses"]) end
  options["licenses"] = table.concat(licenses, ",")
  options["gres"] = #kept > 0 and table.concat(kept, ",") or "none"
  return slurm.SUCCESS
end

function slurm_cli_setup_defaults(options, early_pass) return slurm.SUCCESS end

function slurm_cli_post_submit(offset, job_id, step_id) return slurm.SUCCESS end
