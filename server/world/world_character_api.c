/* world_character_api: the characters' part of world.h: making a body a character (its options,
 * with the defaults filled in and bounds that keep a hostile option from costing), jumps, its
 * state, the counts, and despawning one. The step is world_character.c's. */
#include "world_character.h"

/* The options with the defaults filled in; false for a non-finite one. Negative lengths and
 * speeds are taken as 0 (their defaults), as is a non-positive gravity scale. */
static bool fill_options(const world_character_options *in, world_character_options *o) {
    *o = in ? *in : (world_character_options){0};
    float v[5] = {o->max_slope, o->step_height, o->snap_distance, o->jump_speed, o->gravity_scale};
    for (int k = 0; k < 5; k++)
        if (!isfinite(v[k])) return false;
    if (!(o->max_slope > 0.0f)) o->max_slope = WORLD_CHARACTER_MAX_SLOPE;
    if (o->max_slope > 1.5533430f) o->max_slope = 1.5533430f; /* 89 degrees */
    if (!(o->step_height > 0.0f)) o->step_height = 0.0f;
    if (!(o->snap_distance > 0.0f)) o->snap_distance = 0.0f;
    if (!(o->jump_speed > 0.0f)) o->jump_speed = 0.0f;
    if (!(o->gravity_scale > 0.0f)) o->gravity_scale = 1.0f;
    if (!o->jump_buffer_ms) o->jump_buffer_ms = WORLD_CHARACTER_BUFFER_MS;
    if (!o->coyote_ms) o->coyote_ms = WORLD_CHARACTER_BUFFER_MS;
    return true;
}

world_status world_body_set_character(world *w, world_body_id id,
                                      const world_character_options *opt) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    if (w->slots[slot].kind != WORLD_BODY_MOVING) return WORLD_ERR_NOT_MOVING;
    world_character_options o;
    if (!fill_options(opt, &o)) return WORLD_ERR_NOT_FINITE;
    /* Bounds that keep a hostile option from costing: a step or a snap taller than the character
     * is none (a step of 1e30 would sweep the whole map each blocked step), and a pull a thousand
     * times the world's is past any game's. */
    const world_mover *m = &w->movers[w->slots[slot].index];
    vec2 size = v2_sub(m->hi, m->lo);
    vec2 g = w->cfg.gravity;
    float glen = sqrtf(v2_dot(g, g));
    float tall =
        glen > 0.0f ? (fabsf(g.x) * size.x + fabsf(g.y) * size.y) / glen : wmax(size.x, size.y);
    o.step_height = wmin(o.step_height, tall);
    o.snap_distance = wmin(o.snap_distance, tall);
    o.gravity_scale = wmin(o.gravity_scale, WORLD_CHARACTER_MAX_GRAVITY_SCALE);
    if (!w->characters) {
        w->characters = world_alloc(w, w->capacity, sizeof *w->characters);
        if (!w->characters) return WORLD_ERR_NO_MEMORY;
    }
    world_character *c = &w->characters[slot];
    if (!c->on) {
        memset(c, 0, sizeof *c);
        c->on = 1;
        c->carrier = UINT32_MAX;
        w->character_count++;
    }
    c->opt = o;
    c->still_epoch = 0;
    c->cos_slope = geom_cos_sin(o.max_slope).x;
    double rate = w->cfg.tick_rate_hz;
    c->buffer_ticks = (uint32_t)ceil((double)o.jump_buffer_ms * rate / 1000.0);
    c->coyote_ticks = (uint32_t)floor((double)o.coyote_ms * rate / 1000.0);
    if (w->turns && w->turns[slot].in_use) w->turns[slot].spin = 0.0f; /* characters do not turn */
    return WORLD_OK;
}

world_status world_character_jump(world *w, world_body_id id) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX) return WORLD_ERR_NOT_FOUND;
    if (!world_is_character(w, slot)) return WORLD_OK;
    world_character *c = &w->characters[slot];
    /* the next step applies it: steps tick+1 .. tick+buffer_ticks may take it */
    c->jump_until = w->tick + c->buffer_ticks;
    return WORLD_OK;
}

bool world_body_character(const world *w, world_body_id id, world_character_state *out) {
    uint32_t slot = id_slot(w, id);
    if (slot == UINT32_MAX || !world_is_character(w, slot)) return false;
    const world_character *c = &w->characters[slot];
    out->grounded = c->grounded;
    out->ground = c->ground;
    out->vertical = c->vy;
    out->options = c->opt;
    return true;
}

uint32_t world_character_count(const world *w) { return w->character_count; }
uint32_t world_one_way_count(const world *w) { return w->one_way_count; }

void world_character_despawn(world *w, uint32_t slot) {
    if (!world_is_character(w, slot)) return;
    w->characters[slot].on = 0;
    w->character_count--;
}
