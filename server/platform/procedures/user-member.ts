/**
 * The `userId` input member of the routes that act for a trading user: the user per call, in place of
 * the x-user-id header (a tRPC batch's calls share their headers; the gate reads the member, see
 * user-id.ts). builder.ts adds it to every such route's input schema, so it is validated, documented
 * in /openapi.json and typed for the client like any member, and removes it before the handler.
 */
import { z } from 'zod';
import { IDENTIFIER, IDENTIFIER_RULE } from '../../lib/identifiers.ts';

/** The trading user the document's examples and code samples use. */
export const EXAMPLE_USER = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

export const userMemberShape = {
  // (The meta sits inside optional(): the OpenAPI generator documents an optional member by its inner schema.)
  userId: z
    .string()
    .regex(IDENTIFIER, `must be ${IDENTIFIER_RULE}`)
    .meta({ description: 'The trading user, in place of the x-user-id header: one of them is required, and if both are sent they must name the same user. Per call, so each call of a tRPC batch can name its own', example: EXAMPLE_USER })
    .optional(),
};

/** The member, for the base procedures' types (builder.ts): `{ userId?: string }` joins every input (which may stay absent). */
export const userMemberType = z.object(userMemberShape).optional();

type Def = { type: string; innerType?: z.ZodType };

/** The route's input schema with the member: a (strict) object, or one with a `{}` prefault (optionalParams). */
export function withUserMember(schema: z.ZodType, path: string): z.ZodType {
  const def = (schema as unknown as { def: Def }).def;
  if (def.type === 'object') return (schema as z.ZodObject).extend(userMemberShape);
  if (def.type === 'prefault' && (def.innerType as unknown as { def: Def } | undefined)?.def.type === 'object') {
    return (def.innerType as z.ZodObject).extend(userMemberShape).prefault({} as never);
  }
  throw new Error(`${path}: a trading user's route takes an object input (optionalParams or z.strictObject), to carry userId`);
}

/** The parsed input as the handler takes it: without the member (the gate has read it). */
export function withoutUserMember(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || !('userId' in input)) return input;
  const { userId: _, ...rest } = input as Record<string, unknown>;
  return rest;
}
