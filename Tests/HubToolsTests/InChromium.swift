import Testing

/// The tests in a real browser, one at a time: each runs a hubd and a headless Chromium, and several at once on 2
/// cores starve the rest of a full run of its deadlines (a run at a load of 9.5 failed two unrelated tests on
/// 2026-12-06). Their suites are nested here, so `--filter DashboardActionsTests` still finds each.
@Suite(.serialized) struct InChromium {}
