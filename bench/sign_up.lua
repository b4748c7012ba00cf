-- POST /api/auth/sign-up/email, a new address on every request: run id + thread id + counter.
-- BENCH_RUN_ID keeps addresses unique across runs against the same database.
local thread_count = 0
local threads = {}
failures = 0
local run_id = os.getenv("BENCH_RUN_ID") or tostring(os.time())

function setup(thread)
  thread_count = thread_count + 1
  threads[#threads + 1] = thread
  thread:set("tid", thread_count)
end

local counter = 0
local headers = { ["Content-Type"] = "application/json" }

function request()
  counter = counter + 1
  local email = "signup-" .. run_id .. "-" .. tostring(tid) .. "-" .. counter .. "@example.com"
  local body = '{"name":"Bench","email":"' .. email .. '","password":"bench-password-123"}'
  return wrk.format("POST", "/api/auth/sign-up/email", headers, body)
end

-- Only a 200 with a session token counts: a fast 4xx must not pass for speed ("Failed responses").
function response(status, headers, body)
  if status ~= 200 or not body:find('"token":"', 1, true) then
    failures = failures + 1
  end
end

function done(summary, latency, requests)
  local failed = 0
  for _, thread in ipairs(threads) do
    failed = failed + thread:get("failures")
  end
  io.write(string.format("Failed responses: %d\n", failed))
end
