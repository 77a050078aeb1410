// /docs: mounts Scalar's API reference (scalar.js, served from here) on /openapi.json. A file of its
// own, not an inline script, so the page's CSP can say script-src 'self'. Every option that would
// reach another origin is turned off: fonts from Scalar's CDN, telemetry, the request proxy, the
// AI agent and MCP features, and Scalar's hosted services (their URLs point back at this origin).
//
// Loaded before scalar.js: the zod inside the bundle reads this global config when it loads, and
// `jitless` keeps it from probing for eval (the CSP forbids eval, so the probe would be reported as
// a violation and then answered with the same interpreter this picks).
globalThis.__zod_globalConfig = Object.assign(globalThis.__zod_globalConfig || {}, { jitless: true });

document.addEventListener('DOMContentLoaded', function () {
  'use strict';
  var mount = document.getElementById('reference');
  var here = window.location.origin;
  window.Scalar.createApiReference(mount, {
    url: mount.getAttribute('data-openapi-url'),
    withDefaultFonts: false,
    telemetry: false,
    // No proxy: "Try it" calls this server directly (same origin, so no CORS either).
    proxyUrl: '',
    externalUrls: { dashboardUrl: here, registryUrl: here, proxyUrl: here, apiBaseUrl: here },
    agent: { disabled: true, hideAddApi: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    documentDownloadType: 'json',
    persistAuth: false,
    hideClientButton: true,
    // Only our own samples (x-codeSamples: curl, fetch, the typed tRPC client), not Scalar's generated ones.
    hiddenClients: true,
    authentication: { preferredSecurityScheme: 'ApiKey' },
    defaultOpenAllTags: true,
    // Members in the order the schemas declare them (required ones first), not alphabetical.
    orderSchemaPropertiesBy: 'preserve',
    orderRequiredPropertiesFirst: true,
    onLoaded: function () {
      document.body.setAttribute('data-ready', 'true');
    },
  });
});
