/** Styles imported for their side effect: Bun.build emits them as a .css asset. */
declare module '*.css';
