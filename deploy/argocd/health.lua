-- Argo CD health check for benchrun.dev/BenchmarkRun.
--
-- Install it under the argocd-cm key `resource.customizations.health.benchrun.dev_BenchmarkRun`
-- (see docs/experiments.md, GitOps). A run is Progressing while it measures, Healthy once it
-- succeeded, and Degraded when it failed or when a measurement was worse than its baseline
-- (condition Regressed=True, set as soon as the first worse cell is measured).
local hs = {}

local function condition(type)
  if obj.status ~= nil and obj.status.conditions ~= nil then
    for _, c in ipairs(obj.status.conditions) do
      if c.type == type then
        return c
      end
    end
  end
  return nil
end

if obj.status == nil or obj.status.phase == nil then
  hs.status = "Progressing"
  hs.message = "waiting for the benchrun operator"
  return hs
end

local phase = obj.status.phase
local progress = obj.status.progress or "0/?"
local regressed = condition("Regressed")

if phase == "Failed" then
  local failed = condition("Failed")
  local accepted = condition("Accepted")
  hs.status = "Degraded"
  if accepted ~= nil and accepted.status == "False" then
    hs.message = accepted.message
  elseif failed ~= nil then
    hs.message = failed.message
  else
    hs.message = "the run failed"
  end
  return hs
end

if regressed ~= nil and regressed.status == "True" then
  hs.status = "Degraded"
  hs.message = "regressed " .. regressed.message
  return hs
end

if phase == "Succeeded" then
  hs.status = "Healthy"
  hs.message = progress .. " measurements"
  if regressed ~= nil then
    hs.message = hs.message .. "; " .. regressed.message
  end
  return hs
end

hs.status = "Progressing"
hs.message = phase .. ", " .. progress .. " measurements"
return hs
