// Preloaded into Portkey's gateway (node --import) by lab/start.sh. Two things, nothing else:
//
// 1. Every listening socket binds 127.0.0.1. The gateway's start-server.js calls
//    @hono/node-server's serve({ fetch, port }) with no hostname, which listens on all
//    interfaces, and has no option or environment variable for the host.
// 2. When EMBEDCHECK_LAB_PORTKEY_ROUTE names a base URL, a request that carries neither
//    x-portkey-provider nor x-portkey-config gets the two routing headers a Portkey client
//    sends (x-portkey-provider: openai, x-portkey-custom-host: that URL), as if the client had
//    set them as default headers. The open-source gateway has no default config of its own:
//    without one of those headers it answers 400. A request that names its own route is
//    passed on untouched.
import http from "node:http";
import net from "node:net";

const HOST = "127.0.0.1";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === "object") {
    if (first.path === undefined) args[0] = { ...first, host: HOST };
  } else if (typeof first === "number" || /^\d+$/.test(String(first))) {
    if (typeof args[1] === "string") args[1] = HOST;
    else args.splice(1, 0, HOST);
  }
  return listen.apply(this, args);
};

const route = process.env.EMBEDCHECK_LAB_PORTKEY_ROUTE;
if (route) {
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, req, ...rest) {
    if (event === "request" && req && Array.isArray(req.rawHeaders)) {
      const names = new Set();
      for (let i = 0; i < req.rawHeaders.length; i += 2) names.add(String(req.rawHeaders[i]).toLowerCase());
      if (!names.has("x-portkey-provider") && !names.has("x-portkey-config")) {
        const added = [["x-portkey-provider", "openai"]];
        if (!names.has("x-portkey-custom-host")) added.push(["x-portkey-custom-host", route]);
        const headers = req.headers;
        for (const [name, value] of added) {
          req.rawHeaders.push(name, value);
          if (headers[name] === undefined) headers[name] = value;
        }
      }
    }
    return emit.call(this, event, req, ...rest);
  };
}
