// Headless Chromium for the browser tests (console, console SSO, the OAuth
// authorization code sign-in): Debian's /usr/bin/chromium, or
// $AIRLOCK_CHROMIUM, driven by playwright-core. --no-sandbox because the
// tests run as root, where Chromium's own sandbox refuses to start.
import { chromium } from 'playwright-core';

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.AIRLOCK_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox'],
  });
}
