-- Argo CD health check for modkind's Modules (modkind.io/Module), rollouts included.
-- Degraded when a rollout stopped on failures, or the Module cannot be served (Synced=False);
-- Suspended while a rollout is paused or waits to be promoted; Progressing while a rollout moves
-- instances or the kind is not served yet; Healthy when the kind is served and no rollout is under way.
local hs = { status = "Progressing", message = "" }
local st = obj.status
if st ~= nil and st.rollout ~= nil then
  local r = st.rollout
  local msg = r.message or ""
  if r.phase == "Stopped" then
    hs.status = "Degraded"
    hs.message = msg
    return hs
  end
  if r.phase == "Paused" or r.phase == "WaitingForPromotion" then
    hs.status = "Suspended"
    hs.message = msg
    return hs
  end
  if r.phase == "Progressing" then
    hs.message = msg
    return hs
  end
end
if st == nil or st.conditions == nil then
  hs.message = "Waiting for modkind to read the module"
  return hs
end
local ready, synced
for _, c in ipairs(st.conditions) do
  if c.type == "Ready" then ready = c end
  if c.type == "Synced" then synced = c end
end
if synced ~= nil and synced.status == "False" then
  hs.status = "Degraded"
  hs.message = synced.message or ""
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  if st.rollout ~= nil then
    hs.message = st.rollout.message or ""
  end
  return hs
end
if ready ~= nil then
  hs.message = ready.message or ready.reason or ""
end
return hs
