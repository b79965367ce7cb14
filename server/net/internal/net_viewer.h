/* The live viewer's files (client/js/viewer: its page and the bundle built from the TypeScript
 * SDK) and the play page's (client/js/play: a small game on the SDK), compiled into collided at
 * build time (server/net/CMakeLists.txt) and served on the WebSocket port unless --viewer off
 * (net_ws.c): the viewer at GET / and GET /dist/viewer.js, the game at GET /play and
 * GET /dist/play.js. The bundles are the committed client/js/viewer/bundle/viewer.js and
 * client/js/play/bundle/play.js, so the daemon builds without Node; the js_ tests check they are
 * what the SDK's sources build today. */
#ifndef COLLIDE_NET_VIEWER_H
#define COLLIDE_NET_VIEWER_H

#include <stddef.h>

extern const char net_viewer_html[]; /* client/js/viewer/index.html, NUL-terminated */
extern const char net_viewer_js[];   /* client/js/viewer/bundle/viewer.js, NUL-terminated */
extern const char net_play_html[];   /* client/js/play/index.html, NUL-terminated */
extern const char net_play_js[];     /* client/js/play/bundle/play.js, NUL-terminated */
/* The world's WebAssembly module (client/js/wasm/collide_world.wasm, built with the SDK), which
 * the play page's WorldPredictor steps: GET /dist/collide_world.wasm. Empty (size 0, not served)
 * in a daemon built with -DCOLLIDE_WASM=OFF: the page then predicts without it. */
extern const unsigned char net_play_wasm[];
extern const size_t net_play_wasm_size;

#endif
