/* The live viewer's files (client/js/viewer: its page and the bundle built from the TypeScript
 * SDK), compiled into collided at build time (server/net/CMakeLists.txt) and served on the
 * WebSocket port at GET / and GET /dist/viewer.js unless --viewer off (net_ws.c). The bundle is
 * the committed client/js/viewer/bundle/viewer.js, so the daemon builds without Node; the js_
 * tests check it is what the SDK's sources build today. */
#ifndef COLLIDE_NET_VIEWER_H
#define COLLIDE_NET_VIEWER_H

extern const char net_viewer_html[]; /* client/js/viewer/index.html, NUL-terminated */
extern const char net_viewer_js[];   /* client/js/viewer/bundle/viewer.js, NUL-terminated */

#endif
