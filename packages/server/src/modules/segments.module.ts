import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import { segmentRoutes } from "../http/routes/segment.routes.js";
import { SegmentService } from "../features/segments/segment.service.js";

export function segmentsModule({ db, work, clock }: FeatureDeps): FeatureModule<{ segments: SegmentService }> {
  const segments = new SegmentService(db, work, clock);
  return { services: { segments }, routes: (app) => segmentRoutes(app, segments) };
}
