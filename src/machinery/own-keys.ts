// Keys of user data (ConfigMap data, labels, annotations, free-form fields) on plain objects. Any
// string is a key, including the names of Object.prototype's members: `obj[key]` and `key in obj` see
// `constructor`, `toString`, ... where the object has no such key, and `obj[key] = v` with key
// `__proto__` sets the object's prototype instead of adding a key (unless the object already has an
// own `__proto__`, as JSON.parse makes). Object spread, rest properties, Object.fromEntries and
// structuredClone copy an own `__proto__` as a key; Object.assign does not.

/** The value of an own key of `object`, or undefined (never an inherited member). */
export function ownValue(object: Record<string, unknown> | undefined, key: string): unknown {
  return object !== undefined && Object.hasOwn(object, key) ? object[key] : undefined
}

/** Sets a key of `target` as an own, enumerable property, even one named __proto__. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, {value, enumerable: true, writable: true, configurable: true})
  else target[key] = value
}
