/** What a run's review did to the track record of the skills it used: returned by the review activities to the review workflows. */
export interface TrackRecordUpdate {
  observed: Array<{ name: string; via: 'pinned' | 'recalled' }>;
  disabled: string[];
}
