-- GET /me/ (the example project's @login_required view) with a seeded session cookie, a different one
-- on each request: the middleware path, where authservice.middleware.AuthSessionMiddleware resolves
-- request.user from the session cookie.
-- BENCH_COOKIES: file with one Cookie header value per line (written by seed.py).
--
-- Only a 200 whose body is {"email": "bench-N@example.com"} counts: a signed-out request gets a 302 to
-- the login page, which wrk would count as a success. Anything else is printed in done() as "Failed
-- responses" (report.py adds them to non-2xx).
local threads = {}

function setup(thread)
  threads[#threads + 1] = thread
end

local requests = {}
local n = 0
failures = 0

function init(args)
  local path = os.getenv("BENCH_COOKIES")
  for line in io.lines(path) do
    if line ~= "" then
      requests[#requests + 1] = wrk.format("GET", "/me/", { ["Cookie"] = line })
    end
  end
  assert(#requests > 0, "no cookies in " .. path)
  n = math.random(#requests)
end

function request()
  n = n % #requests + 1
  return requests[n]
end

function response(status, headers, body)
  if status ~= 200 or not body:find('^{"email": "bench%-%d+@example%.com"}$') then
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
