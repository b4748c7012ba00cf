-- GET /api/auth/ok: the service's no-database endpoint, the ceiling of the serving layer.
-- Only a 200 whose body is {"ok":true} counts (done() prints the others as "Failed responses").
local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
end

failures = 0

function request()
  return wrk.format("GET", "/api/auth/ok")
end

function response(status, headers, body)
  if status ~= 200 or not body:find('"ok":%s*true') then
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
