/* net_rooms: the room directory. Rooms live in stable slots (an id is its slot and the slot's
 * generation, so a stale id is recognised), found by name through an open-addressing index. */
#include "net_rooms.h"

#include "collide.pb-c.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct net_world_text {
    atomic_uint refs;
    size_t len;
    char *data;
};

net_world_text *net_world_text_make(char *text, size_t len) {
    net_world_text *t = malloc(sizeof *t);
    if (!t) {
        free(text);
        return NULL;
    }
    atomic_init(&t->refs, 1u);
    t->len = len;
    t->data = text;
    return t;
}

net_world_text *net_world_text_ref(net_world_text *t) {
    if (t) atomic_fetch_add_explicit(&t->refs, 1u, memory_order_relaxed);
    return t;
}

void net_world_text_unref(net_world_text *t) {
    if (!t) return;
    /* acq_rel: the last owner must see every write the others made before letting go */
    if (atomic_fetch_sub_explicit(&t->refs, 1u, memory_order_acq_rel) == 1u) {
        free(t->data);
        free(t);
    }
}

const char *net_world_text_data(const net_world_text *t) { return t->data; }

typedef struct room {
    bool used;
    uint8_t len;
    char name[NET_ROOM_NAME_MAX + 1];
    uint32_t gen;         /* bumped each time the slot is handed out */
    uint32_t thread;      /* owner */
    uint32_t clients;     /* welcomed, in this room */
    uint32_t inflight;    /* joins admitted, not yet arrived or abandoned */
    uint32_t max_clients; /* 0 = only the daemon's */
    bool auto_created;
    uint64_t bodies, tick; /* published by the owner */
    double tick_p99_ms;
    net_world_text *world; /* a reference; NULL: the default world */
    uint32_t next_free;    /* free list, slot + 1; 0 = end */
} room;

struct net_rooms {
    pthread_mutex_t lock;
    net_rooms_config cfg;
    room *slots;
    uint32_t slot_count; /* slots ever used */
    uint32_t slot_cap;
    uint32_t free_head; /* slot + 1 of the first free slot; 0 = none */
    uint32_t *index;    /* name hash: slot + 1, 0 = empty */
    uint32_t index_cap; /* power of two, > 2 x rooms */
    uint32_t rooms;     /* rooms in the directory, default included */
    uint32_t clients; /* welcomed and in flight, all rooms (closed ones' clients until they left) */
    uint32_t *thread_clients; /* per thread: clients and in flight of its rooms */
    uint32_t *thread_rooms;   /* per thread: rooms */
    bool *thread_overloaded;  /* per thread: its ticks are persistently late */
    bool draining;
};

const char *net_room_status_str(net_room_status st) {
    switch (st) {
    case NET_ROOM_OK:
        return "ok";
    case NET_ROOM_BAD_NAME:
        return "bad room name";
    case NET_ROOM_NOT_FOUND:
        return "no such room";
    case NET_ROOM_TOO_MANY:
        return "too many rooms";
    case NET_ROOM_EXISTS:
        return "room exists";
    case NET_ROOM_FULL:
        return "room full";
    case NET_ROOM_SERVER_FULL:
        return "server full";
    case NET_ROOM_FORBIDDEN:
        return "forbidden";
    case NET_ROOM_SHUTTING_DOWN:
        return "shutting down";
    case NET_ROOM_AT_CAPACITY:
        return "at capacity";
    }
    return "unknown";
}

int net_rooms_status_error_code(net_room_status st) {
    switch (st) {
    case NET_ROOM_OK:
        return 0;
    case NET_ROOM_NOT_FOUND:
        return COLLIDE__V1__ERROR_CODE__ERROR_CODE_NOT_FOUND;
    case NET_ROOM_TOO_MANY:
    case NET_ROOM_FULL:
    case NET_ROOM_SERVER_FULL:
    case NET_ROOM_AT_CAPACITY:
        return COLLIDE__V1__ERROR_CODE__ERROR_CODE_LIMIT_EXCEEDED;
    case NET_ROOM_FORBIDDEN: /* CloseRoom of `default` */
        return COLLIDE__V1__ERROR_CODE__ERROR_CODE_FORBIDDEN;
    case NET_ROOM_SHUTTING_DOWN:
        return COLLIDE__V1__ERROR_CODE__ERROR_CODE_SHUTTING_DOWN;
    case NET_ROOM_BAD_NAME:
    case NET_ROOM_EXISTS: /* CreateRoom of a name in use: the request is wrong, not a limit */
        return COLLIDE__V1__ERROR_CODE__ERROR_CODE_BAD_REQUEST;
    }
    return COLLIDE__V1__ERROR_CODE__ERROR_CODE_BAD_REQUEST; /* not a status: a caller's bug */
}

bool net_room_name_valid(const char *name, size_t len) {
    if (len == 0 || len > NET_ROOM_NAME_MAX) return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)name[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == ':' || ch == '-';
        if (!ok) return false;
    }
    return true;
}

const char *net_room_name_of(const char *room, size_t *len) {
    if (!room || *len == 0) {
        *len = sizeof NET_ROOM_DEFAULT - 1;
        return NET_ROOM_DEFAULT;
    }
    return room;
}

/* ---- The name index (linear probing, backward-shift deletion) -------------------------------- */

static uint32_t name_hash(const char *name, size_t len) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 16777619u;
    return h;
}

static bool same_name(const room *rm, const char *name, size_t len) {
    return rm->len == len && memcmp(rm->name, name, len) == 0;
}

/* The index position holding name, or of the empty entry where it would go. */
static uint32_t index_pos(const net_rooms *r, const char *name, size_t len) {
    uint32_t mask = r->index_cap - 1, pos = name_hash(name, len) & mask;
    while (r->index[pos] && !same_name(&r->slots[r->index[pos] - 1], name, len))
        pos = (pos + 1) & mask;
    return pos;
}

static bool index_grow(net_rooms *r) {
    uint32_t cap = r->index_cap ? r->index_cap * 2u : 16u;
    uint32_t *index = calloc(cap, sizeof *index);
    if (!index) return false;
    uint32_t *old = r->index, old_cap = r->index_cap;
    r->index = index;
    r->index_cap = cap;
    for (uint32_t i = 0; i < old_cap; i++) {
        if (!old[i]) continue;
        const room *rm = &r->slots[old[i] - 1];
        r->index[index_pos(r, rm->name, rm->len)] = old[i];
    }
    free(old);
    return true;
}

static void index_remove(net_rooms *r, uint32_t pos) {
    uint32_t mask = r->index_cap - 1;
    r->index[pos] = 0;
    /* Shift back the entries after the hole that would no longer be found past it. */
    for (uint32_t next = (pos + 1) & mask; r->index[next]; next = (next + 1) & mask) {
        const room *rm = &r->slots[r->index[next] - 1];
        uint32_t home = name_hash(rm->name, rm->len) & mask;
        /* next stays unless its home lies cyclically in (pos, next] */
        bool stays = pos <= next ? (home > pos && home <= next) : (home > pos || home <= next);
        if (stays) continue;
        r->index[pos] = r->index[next];
        r->index[next] = 0;
        pos = next;
    }
}

/* ---- Slots ------------------------------------------------------------------------------------
 */

static net_room_id room_id(const net_rooms *r, const room *rm) {
    return ((uint64_t)rm->gen << 32) | (uint64_t)(rm - r->slots + 1);
}

static room *room_of(net_rooms *r, net_room_id id) {
    uint64_t slot = id & 0xffffffffu;
    if (slot == 0 || slot > r->slot_count) return NULL;
    room *rm = &r->slots[slot - 1];
    return rm->used && rm->gen == (uint32_t)(id >> 32) ? rm : NULL;
}

/* Whether thread a is a better home for a new room than thread b: not overloaded first, then
 * fewer clients, then fewer rooms (then the lower number, by the caller's order). */
static bool better_home(const net_rooms *r, uint32_t a, uint32_t b) {
    if (r->thread_overloaded[a] != r->thread_overloaded[b]) return !r->thread_overloaded[a];
    if (r->thread_clients[a] != r->thread_clients[b])
        return r->thread_clients[a] < r->thread_clients[b];
    return r->thread_rooms[a] < r->thread_rooms[b];
}

static uint32_t least_loaded_thread(const net_rooms *r) {
    uint32_t best = 0;
    for (uint32_t t = 1; t < r->cfg.threads; t++)
        if (better_home(r, t, best)) best = t;
    return best;
}

/* A new room named name (not in the index: the caller checked). NULL when out of memory. */
static room *room_add(net_rooms *r, const char *name, size_t len, uint32_t thread) {
    if (2u * (r->rooms + 1u) > r->index_cap && !index_grow(r)) return NULL;
    room *rm;
    if (r->free_head) {
        rm = &r->slots[r->free_head - 1];
        r->free_head = rm->next_free;
    } else {
        if (r->slot_count == r->slot_cap) {
            uint32_t cap = r->slot_cap ? r->slot_cap * 2u : 16u;
            room *slots = realloc(r->slots, cap * sizeof *slots);
            if (!slots) return NULL;
            r->slots = slots;
            r->slot_cap = cap;
        }
        rm = &r->slots[r->slot_count++];
        rm->gen = 0;
    }
    uint32_t gen = rm->gen + 1u;
    memset(rm, 0, sizeof *rm);
    rm->gen = gen ? gen : 1u;
    rm->used = true;
    rm->len = (uint8_t)len;
    memcpy(rm->name, name, len);
    rm->thread = thread;
    r->index[index_pos(r, name, len)] = (uint32_t)(rm - r->slots + 1);
    r->rooms++;
    r->thread_rooms[thread]++;
    return rm;
}

/* Takes the room out of the directory; its clients still count (globally) until they leave. */
static void room_remove(net_rooms *r, room *rm) {
    index_remove(r, index_pos(r, rm->name, rm->len));
    r->thread_rooms[rm->thread]--;
    r->thread_clients[rm->thread] -= rm->clients + rm->inflight;
    net_world_text_unref(rm->world);
    rm->world = NULL;
    /* Joins in flight to a closed room are refused on arrival (net_rooms_arrived): they count no
     * more. Its welcomed clients count globally until they leave. */
    r->clients -= rm->inflight;
    rm->used = false;
    rm->next_free = r->free_head;
    r->free_head = (uint32_t)(rm - r->slots + 1);
    r->rooms--;
}

static void info_of(const net_rooms *r, const room *rm, net_room_info *out) {
    memset(out, 0, sizeof *out);
    memcpy(out->name, rm->name, rm->len);
    out->id = room_id(r, rm);
    out->thread = rm->thread;
    out->clients = rm->clients + rm->inflight;
    out->auto_created = rm->auto_created;
    out->max_clients = rm->max_clients;
    out->bodies = rm->bodies;
    out->tick = rm->tick;
    out->tick_p99_ms = rm->tick_p99_ms;
}

/* ---- API --------------------------------------------------------------------------------------
 */

net_rooms *net_rooms_create(const net_rooms_config *cfg) {
    if (!cfg || cfg->threads == 0) return NULL;
    net_rooms *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->cfg = *cfg;
    r->thread_clients = calloc(cfg->threads, sizeof *r->thread_clients);
    r->thread_rooms = calloc(cfg->threads, sizeof *r->thread_rooms);
    r->thread_overloaded = calloc(cfg->threads, sizeof *r->thread_overloaded);
    if (!r->thread_clients || !r->thread_rooms || !r->thread_overloaded ||
        pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r->thread_clients);
        free(r->thread_rooms);
        free(r->thread_overloaded);
        free(r);
        return NULL;
    }
    net_world_text_ref(cfg->default_world);
    if (!room_add(r, NET_ROOM_DEFAULT, sizeof NET_ROOM_DEFAULT - 1, 0)) {
        net_rooms_destroy(r);
        return NULL;
    }
    return r;
}

void net_rooms_destroy(net_rooms *r) {
    if (!r) return;
    pthread_mutex_destroy(&r->lock);
    for (uint32_t i = 0; i < r->slot_count; i++)
        if (r->slots[i].used) net_world_text_unref(r->slots[i].world);
    net_world_text_unref(r->cfg.default_world);
    free(r->thread_overloaded);
    free(r->slots);
    free(r->index);
    free(r->thread_clients);
    free(r->thread_rooms);
    free(r);
}

static room *find(net_rooms *r, const char *name, size_t len) {
    uint32_t at = r->index[index_pos(r, name, len)];
    return at ? &r->slots[at - 1] : NULL;
}

net_room_status net_rooms_join(net_rooms *r, const char *name, size_t len, bool admin,
                               net_room_ref *out) {
    if (!net_room_name_valid(name, len)) return NET_ROOM_BAD_NAME;
    net_room_status st = NET_ROOM_OK;
    pthread_mutex_lock(&r->lock);
    room *rm = find(r, name, len);
    bool created = false;
    if (r->draining) {
        st = NET_ROOM_SHUTTING_DOWN;
    } else if (r->clients >= r->cfg.max_clients) {
        st = NET_ROOM_SERVER_FULL;
    } else if (!rm && !r->cfg.auto_create) {
        st = NET_ROOM_NOT_FOUND;
    } else if (!rm && r->rooms - 1u >= r->cfg.max_rooms) {
        st = NET_ROOM_TOO_MANY;
    } else if (rm && rm->max_clients && rm->clients + rm->inflight >= rm->max_clients) {
        st = NET_ROOM_FULL;
    } else if (!admin && rm && r->thread_overloaded[rm->thread]) {
        st = NET_ROOM_AT_CAPACITY;
    } else if (!admin && !rm && r->thread_overloaded[least_loaded_thread(r)]) {
        st = NET_ROOM_AT_CAPACITY; /* every thread is */
    } else if (!rm) {
        rm = room_add(r, name, len, least_loaded_thread(r));
        if (!rm)
            st = NET_ROOM_TOO_MANY; /* out of memory: refused as a limit */
        else
            rm->auto_created = created = true;
    }
    if (st == NET_ROOM_OK) {
        rm->inflight++;
        r->clients++;
        r->thread_clients[rm->thread]++;
        out->id = room_id(r, rm);
        out->thread = rm->thread;
        out->created = created;
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

bool net_rooms_arrived(net_rooms *r, net_room_id id) {
    pthread_mutex_lock(&r->lock);
    room *rm = room_of(r, id);
    if (rm) {
        rm->inflight--;
        rm->clients++;
    }
    pthread_mutex_unlock(&r->lock);
    return rm != NULL;
}

void net_rooms_abandon(net_rooms *r, net_room_id id) {
    pthread_mutex_lock(&r->lock);
    room *rm = room_of(r, id);
    if (rm) { /* else the close already stopped counting it */
        rm->inflight--;
        r->thread_clients[rm->thread]--;
        r->clients--;
    }
    pthread_mutex_unlock(&r->lock);
}

void net_rooms_left(net_rooms *r, net_room_id id) {
    pthread_mutex_lock(&r->lock);
    room *rm = room_of(r, id);
    if (rm) {
        rm->clients--;
        r->thread_clients[rm->thread]--;
    }
    r->clients--;
    pthread_mutex_unlock(&r->lock);
}

net_room_status net_rooms_create_room(net_rooms *r, const char *name, size_t len,
                                      uint32_t max_clients, net_world_text *world,
                                      net_room_ref *out) {
    if (!net_room_name_valid(name, len)) return NET_ROOM_BAD_NAME;
    net_room_status st = NET_ROOM_OK;
    pthread_mutex_lock(&r->lock);
    if (r->draining) {
        st = NET_ROOM_SHUTTING_DOWN;
    } else if (find(r, name, len)) {
        st = NET_ROOM_EXISTS;
    } else if (r->rooms - 1u >= r->cfg.max_rooms) {
        st = NET_ROOM_TOO_MANY;
    } else {
        room *rm = room_add(r, name, len, least_loaded_thread(r));
        if (!rm) {
            st = NET_ROOM_TOO_MANY;
        } else {
            rm->max_clients = max_clients;
            rm->world = net_world_text_ref(world);
            out->id = room_id(r, rm);
            out->thread = rm->thread;
            out->created = true;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

net_room_status net_rooms_close(net_rooms *r, const char *name, size_t len, net_room_info *info,
                                net_room_ref *out) {
    if (!net_room_name_valid(name, len)) return NET_ROOM_NOT_FOUND;
    net_room_status st = NET_ROOM_OK;
    pthread_mutex_lock(&r->lock);
    room *rm = find(r, name, len);
    if (!rm) {
        st = NET_ROOM_NOT_FOUND;
    } else if (rm == &r->slots[0]) {
        st = NET_ROOM_FORBIDDEN;
    } else {
        info_of(r, rm, info);
        out->id = info->id;
        out->thread = rm->thread;
        out->created = false;
        room_remove(r, rm);
    }
    pthread_mutex_unlock(&r->lock);
    return st;
}

bool net_rooms_close_if_idle(net_rooms *r, net_room_id id) {
    pthread_mutex_lock(&r->lock);
    room *rm = room_of(r, id);
    bool closed = rm && rm->auto_created && rm->clients == 0 && rm->inflight == 0;
    if (closed) room_remove(r, rm);
    pthread_mutex_unlock(&r->lock);
    return closed;
}

net_world_text *net_rooms_world(net_rooms *r, net_room_id id) {
    pthread_mutex_lock(&r->lock);
    room *rm = room_of(r, id);
    net_world_text *t =
        rm ? net_world_text_ref(rm->world ? rm->world : r->cfg.default_world) : NULL;
    pthread_mutex_unlock(&r->lock);
    return t;
}

void net_rooms_set_overloaded(net_rooms *r, uint32_t thread, bool overloaded) {
    pthread_mutex_lock(&r->lock);
    if (thread < r->cfg.threads) r->thread_overloaded[thread] = overloaded;
    pthread_mutex_unlock(&r->lock);
}

void net_rooms_publish(net_rooms *r, net_room_id id, uint64_t tick, uint64_t bodies,
                       double tick_p99_ms) {
    pthread_mutex_lock(&r->lock);
    room *rm = room_of(r, id);
    if (rm) {
        rm->tick = tick;
        rm->bodies = bodies;
        rm->tick_p99_ms = tick_p99_ms;
    }
    pthread_mutex_unlock(&r->lock);
}

void net_rooms_begin_drain(net_rooms *r) {
    pthread_mutex_lock(&r->lock);
    r->draining = true;
    pthread_mutex_unlock(&r->lock);
}

static int by_name(const void *a, const void *b) {
    const net_room_info *x = a, *y = b;
    bool xd = strcmp(x->name, NET_ROOM_DEFAULT) == 0, yd = strcmp(y->name, NET_ROOM_DEFAULT) == 0;
    if (xd != yd) return xd ? -1 : 1;
    return strcmp(x->name, y->name);
}

size_t net_rooms_list(net_rooms *r, net_room_info *out, size_t max) {
    pthread_mutex_lock(&r->lock);
    size_t n = 0;
    for (uint32_t i = 0; i < r->slot_count; i++) {
        if (!r->slots[i].used) continue;
        if (n < max) info_of(r, &r->slots[i], &out[n]);
        n++;
    }
    pthread_mutex_unlock(&r->lock);
    qsort(out, n < max ? n : max, sizeof *out, by_name);
    return n;
}

bool net_rooms_find(net_rooms *r, const char *name, size_t len, net_room_info *out) {
    if (!net_room_name_valid(name, len)) return false;
    pthread_mutex_lock(&r->lock);
    room *rm = find(r, name, len);
    if (rm) info_of(r, rm, out);
    pthread_mutex_unlock(&r->lock);
    return rm != NULL;
}

void net_rooms_counts(net_rooms *r, uint32_t *rooms, uint32_t *clients) {
    pthread_mutex_lock(&r->lock);
    *rooms = r->rooms;
    *clients = r->clients;
    pthread_mutex_unlock(&r->lock);
}
