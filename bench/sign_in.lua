-- POST /api/auth/sign-in/email as the seeded users in turn (each request verifies one argon2 hash).
-- BENCH_EMAILS: file with one seeded address per line; BENCH_PASSWORD: their password.
local threads = {}
failures = 0

function setup(thread)
  threads[#threads + 1] = thread
end

local requests = {}
local n = 0

function init(args)
  local password = os.getenv("BENCH_PASSWORD")
  local headers = { ["Content-Type"] = "application/json" }
  for email in io.lines(os.getenv("BENCH_EMAILS")) do
    if email ~= "" then
      local body = '{"email":"' .. email .. '","password":"' .. password .. '"}'
      requests[#requests + 1] = wrk.format("POST", "/api/auth/sign-in/email", headers, body)
    end
  end
  assert(#requests > 0, "no e-mails")
  n = math.random(#requests)
end

function request()
  n = n % #requests + 1
  return requests[n]
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
