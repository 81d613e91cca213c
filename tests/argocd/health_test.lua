-- Runs deploy/argocd/health.lua on BenchmarkRun objects as Argo CD would (the object in the
-- global `obj`), and checks the health it returns. Run by `make unit`:
--   lua5.4 tests/argocd/health_test.lua deploy/argocd/health.lua
local script = arg[1]
local failures = 0

local function health(object)
  local env = setmetatable({ obj = object }, { __index = _G })
  local chunk = assert(loadfile(script, "t", env))
  return chunk()
end

local function cond(type, status, message)
  return { type = type, status = status, reason = "R", message = message or "" }
end

local function check(name, object, status, message_part)
  local hs = health(object)
  local ok = hs.status == status and string.find(hs.message or "", message_part, 1, true) ~= nil
  if ok then
    print("ok   " .. name .. ": " .. hs.status .. " (" .. hs.message .. ")")
  else
    failures = failures + 1
    print("FAIL " .. name .. ": got " .. tostring(hs.status) .. " (" .. tostring(hs.message) ..
      "), want " .. status .. " with " .. message_part)
  end
end

check("new", { metadata = {} }, "Progressing", "waiting for the benchrun operator")
check("running", { status = { phase = "Running", progress = "3/8" } }, "Progressing", "Running, 3/8")
check("queued", { status = { phase = "Queued" } }, "Progressing", "Queued, 0/?")
check("succeeded", { status = { phase = "Succeeded", progress = "8/8",
  conditions = { cond("Succeeded", "True") } } }, "Healthy", "8/8 measurements")
check("succeeded, no regression", { status = { phase = "Succeeded", progress = "2/2",
  conditions = { cond("Regressed", "False", "against last-week: Same ×2") } } },
  "Healthy", "against last-week: Same ×2")
check("regressed while running", { status = { phase = "Running", progress = "1/2",
  conditions = { cond("Regressed", "True", "against last-week: Worse ×1") } } },
  "Degraded", "regressed against last-week: Worse ×1")
check("regressed, finished", { status = { phase = "Succeeded", progress = "2/2",
  conditions = { cond("Succeeded", "True"), cond("Regressed", "True", "against v1: Worse ×2") } } },
  "Degraded", "against v1: Worse ×2")
check("invalid spec", { status = { phase = "Failed",
  conditions = { cond("Accepted", "False", "spec.load.connections: 0 is out of range") } } },
  "Degraded", "spec.load.connections")
check("failed", { status = { phase = "Failed",
  conditions = { cond("Accepted", "True"), cond("Failed", "True", "every measurement failed") } } },
  "Degraded", "every measurement failed")

if failures > 0 then
  print(failures .. " failed")
  os.exit(1)
end
print("all passed")
